"""A PNG of a comparison page as a reader sees a document: the page opened in headless Chromium, the document view
of one document (by default the one where the strategies disagree most), scrolled to one of its sentences
(``make screenshot`` writes the demo's into docs/).

    python -m docnmt.score.compare.screenshot results/demo/compare.html --output docs/compare-page.png \
        [--document demo-test-00004 --line 22]
"""

from __future__ import annotations

import sys
from pathlib import Path

from ...manual import argument_parser
from ...option_ranges import POSITIVE_INT
from ...textio import InputError, atomic_write, cli_errors
from . import browser


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.score.compare.screenshot", __doc__.split("\n\n")[0])
    parser.add_argument("page", type=Path, help="a comparison page (compare.html)")
    parser.add_argument("--output", required=True, type=Path, help="the PNG")
    parser.add_argument("--document", help="the document to show (its id; default: the top of the Documents view)")
    parser.add_argument("--line", type=POSITIVE_INT, help="scroll to this line of the test set (1-based)")
    parser.add_argument("--width", type=POSITIVE_INT, default=1400)
    parser.add_argument("--height", type=POSITIVE_INT, default=1000)
    args = parser.parse_args(argv)
    if not args.page.is_file():
        raise InputError(args.page, "file not found")
    reason = browser.missing()
    if reason:
        print(f"error: {reason}", file=sys.stderr)
        return 1
    driver = browser.driver(args.width, args.height)
    try:
        driver.get(browser.url(args.page))
        driver.find_element("css selector", "nav button[data-view=documents]").click()
        selector = "#documents-table tbody tr" + (f"[data-doc='{args.document}']" if args.document else "")
        rows = driver.find_elements("css selector", selector)
        if not rows:
            print(f"error: {args.page}: the page shows no document {args.document or ''}".rstrip(), file=sys.stderr)
            return 1
        rows[0].click()
        if args.line:
            boxes = driver.find_elements("css selector", f".sentence[data-line='{args.line - 1}']")
            if not boxes:
                print(f"error: {args.page}: line {args.line} is not in that document", file=sys.stderr)
                return 1
            driver.execute_script("arguments[0].scrollIntoView({block: 'start'}); window.scrollBy(0, -8);", boxes[0])
        png = driver.get_screenshot_as_png()
    finally:
        driver.quit()
    with atomic_write(args.output, "wb", encoding=None) as handle:
        handle.write(png)
    print(f"{args.output}: {len(png)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

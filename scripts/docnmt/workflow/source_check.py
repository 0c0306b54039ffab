"""Check, before a long run, that every download source of the configured tasks can be had: ``docnmt-check-sources``.

Each location of each source the tasks read (their corpus recipes' sources, ContraPro's, and the ctxpro sets'
files) is asked for its headers, without downloading (:mod:`docnmt.corpora.probe`), and a table is printed: the
source, the location, its status, the size it announces, the size recorded for it (the download lock's record, else
the config's) and whether they match. A mirror (the config's ``mirror``, else ``$DOCNMT_MIRROR``, as the download
rule's CLI reads it) is asked first. The exit status is 1 where some source has no live location (and no ``local``
file), 0 otherwise::

    docnmt-check-sources --tasks news ted os
    docnmt-check-sources --config mine.yaml          # your config over the workflow's config.yaml
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..config import ConfigError, load_workflow
from ..corpora.download import read_lock
from ..corpora.probe import probe_source, table
from ..corpora.sources import Location, Source
from ..manual import argument_parser
from ..option_ranges import POSITIVE
from ..textio import cli_errors
from .corpora import ctxpro_downloads, declared_source, task_sources


def configured_sources(config: dict, tasks: list[str]) -> list[Source]:
    """The sources the tasks read, each once, in the order of the tasks: the corpus recipes' and ContraPro's, then
    the downloaded files of their ctxpro sets."""
    names = []
    for task in tasks:
        names += [name for name in task_sources(config, task) if name not in names]
    sources = [declared_source(config, name) for name in names]
    scoped = dict(config, tasks=tasks)
    for filename, (url, md5) in ctxpro_downloads(scoped).items():
        sources.append(Source(f"ctxpro/{filename}", (Location(url, md5=md5),), filename))
    return sources


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.workflow.source_check", __doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, help="a config file merged over the workflow's config.yaml, as "
                                                    "snakemake --configfile merges it")
    parser.add_argument("--tasks", nargs="+", metavar="TASK", help="the tasks whose sources to check (default: the "
                                                                   "config's tasks)")
    parser.add_argument("--lock", type=Path, help="the download lock whose recorded sizes to compare (default: the "
                                                  "config's download_lock, where it exists)")
    parser.add_argument("--timeout", type=POSITIVE, default=20, help="seconds to wait for each location (default 20)")
    args = parser.parse_args(argv)
    try:
        config = load_workflow(args.config)
    except ConfigError as err:
        parser.error(str(err))
    tasks = args.tasks or config["tasks"]
    unknown = [t for t in tasks if t not in config["task_settings"]]
    if unknown:
        parser.error(f"--tasks: unknown task {unknown[0]!r}; tasks described in task_settings: "
                     f"{', '.join(sorted(config['task_settings']))}")
    try:
        sources = configured_sources(config, tasks)
    except ConfigError as err:
        parser.error(str(err))
    lock_path = args.lock or Path(config["download_lock"])
    lock = read_lock(lock_path) if lock_path.exists() else {}
    if not sources:
        print(f"the tasks {', '.join(tasks)} download nothing")
        return 0
    mirror = config["mirror"] or os.environ.get("DOCNMT_MIRROR") or None  # as the download rule's CLI reads it
    rows = [row for source in sources for row in probe_source(source, mirror, lock, args.timeout)]
    print(table(rows))
    dead = [s.name for s in sources if not any(r.live for r in rows if r.source == s.name)]
    if dead:
        print(f"no live location: {', '.join(dead)} (docs/data.md, \"A file of your own\")", file=sys.stderr)
        return 1
    print(f"every source has a live location ({len(sources)} sources, {len(rows)} locations asked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

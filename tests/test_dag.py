"""DAG inspection: `snakemake --dag` / `--rulegraph` print clean DOT that graphviz renders (what `make dag` does)."""

import shutil
import subprocess

import pytest

from helpers import run_snakemake

pytestmark = [pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz (dot) is missing: `make setup` installs it"),
              pytest.mark.tools]


@pytest.mark.parametrize("graph", ["--dag", "--rulegraph"])
@pytest.mark.parametrize("tasks", ["[demo]", "[news,ted,os]"])
def test_dag_output_is_clean_dot_that_graphviz_renders(tmp_path, graph, tasks):
    result = run_snakemake(tmp_path, graph, "--config", f"tasks={tasks}")
    assert result.stdout.startswith("digraph snakemake_dag {"), result.stdout[:300]
    assert result.stdout.rstrip().endswith("}")
    svg = subprocess.run(["dot", "-Tsvg"], input=result.stdout, capture_output=True, text=True, check=True).stdout
    assert "<svg" in svg and "train" in svg and "tables" in svg
    if graph == "--rulegraph":
        assert "decode_doc_trans_beam" in svg and "pronoun_f1" in svg

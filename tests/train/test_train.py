"""docnmt.train.cli without fairseq running: data checks, resume checks, the command, the GPU rules."""

import json
import os

import pytest

from docnmt.train import cli as train
from docnmt.textio import InputError


def make_bin(tmp_path, src="en", tgt="de", examples=None, dict_tgt="a 3\nb 2\n"):
    data = tmp_path / "bin"
    data.mkdir()
    (data / "manifest.json").write_text(json.dumps({"examples": examples or {"train": 5, "valid": 2, "test": 2}}))
    for split in ("train", "valid", "test"):
        for lang in (src, tgt):
            for ext in ("bin", "idx"):
                (data / f"{split}.{src}-{tgt}.{lang}.{ext}").write_bytes(b"x")
    (data / f"dict.{src}.txt").write_text("a 3\nb 2\n")
    (data / f"dict.{tgt}.txt").write_text(dict_tgt)
    return data


def args_for(tmp_path, data, *extra):
    parser_args = [
        "--data", str(data), "--save-dir", str(tmp_path / "ck"), "--output", str(tmp_path / "best.pt"),
        "--history", str(tmp_path / "ck" / "fairseq.log"), "--src", "en", "--tgt", "de",
        "--dropout", "0.3", "--label-smoothing", "0.2", *extra,
    ]
    return parser_args


def test_options_to_args_turns_true_into_flags_and_drops_false():
    assert train.options_to_args({"arch": "transformer", "share-all-embeddings": True, "fp16": False, "lr": 0.0005}) == [
        "--arch", "transformer", "--share-all-embeddings", "--lr", "0.0005"]


def test_check_data_accepts_a_complete_folder(tmp_path):
    assert train.check_data(make_bin(tmp_path), "en", "de")["examples"]["train"] == 5


def test_missing_binarized_data_is_named(tmp_path):
    with pytest.raises(InputError, match="manifest.json: binarized data not found"):
        train.check_data(tmp_path / "nowhere", "en", "de")


def test_empty_binarized_split_is_an_error(tmp_path):
    data = make_bin(tmp_path)
    (data / "valid.en-de.de.bin").write_bytes(b"")
    with pytest.raises(InputError, match=r"valid.en-de.de.bin: expected a non-empty binarized valid split"):
        train.check_data(data, "en", "de")


def test_source_and_target_dictionaries_must_be_the_joined_one(tmp_path):
    data = make_bin(tmp_path, dict_tgt="a 3\nc 2\n")
    with pytest.raises(InputError, match=r"dict.de.txt: expected the same joined dictionary"):
        train.check_data(data, "en", "de")


def test_corrupt_checkpoint_on_resume_is_an_error_naming_it(tmp_path):
    (tmp_path / "checkpoint_last.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(InputError) as err:
        train.check_resume(tmp_path)
    assert "checkpoint_last.pt: cannot resume" in str(err.value) and "delete it" in str(err.value)


def test_no_checkpoint_means_a_fresh_start(tmp_path):
    assert train.check_resume(tmp_path) is None


def test_resuming_a_training_that_selected_by_another_metric_is_an_error(tmp_path):
    import torch

    torch.save({"optimizer_history": [{"num_updates": 17}], "cfg": {"checkpoint": {"best_checkpoint_metric": "loss"}}},
               tmp_path / "checkpoint_last.pt")
    with pytest.raises(InputError, match="selected its best checkpoint by validation 'loss', expected 'nll_loss'"):
        train.check_resume(tmp_path)
    torch.save({"optimizer_history": [{"num_updates": 17}], "cfg": {"checkpoint": {"best_checkpoint_metric": "nll_loss"}}},
               tmp_path / "checkpoint_last.pt")
    assert train.check_resume(tmp_path) == 17


def test_resume_reads_the_update_count(tmp_path):
    import torch

    torch.save({"optimizer_history": [{"num_updates": 17}]}, tmp_path / "checkpoint_last.pt")
    assert train.check_resume(tmp_path) == 17


def test_command_on_cpu_keeps_the_last_partial_batch(tmp_path, monkeypatch):
    data = make_bin(tmp_path)
    monkeypatch.setattr(train, "visible_gpus", lambda: 0)
    parser_args = args_for(tmp_path, data, "--workers", "4", "--", "--arch", "transformer", "--lr", "0.001")

    captured = {}

    def fake_run(command, env, history):
        captured["command"], captured["env"] = command, env
        return 1

    monkeypatch.setattr(train, "run_logged", fake_run)
    with pytest.raises(SystemExit):
        train.main(parser_args)
    command = captured["command"]
    assert command[command.index("--required-batch-size-multiple") + 1] == "1", "fairseq issue 5036"
    assert "--cpu" in command and "--fp16" not in command
    assert command[command.index("--num-workers") + 1] == "0", "on the CPU the training process loads its batches"
    assert command[command.index("--best-checkpoint-metric") + 1] == "nll_loss", "the paper: validation perplexity"
    assert command[command.index("--label-smoothing") + 1] == "0.2"
    assert command[command.index("--arch") + 1] == "transformer", "the preset from config comes through"
    assert captured["env"]["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] == "1"
    assert not (tmp_path / "best.pt").exists(), "a failed training publishes no checkpoint"


def test_command_on_gpu_uses_fp16_and_keeps_cuda_visible_devices(tmp_path, monkeypatch):
    data = make_bin(tmp_path)
    monkeypatch.setattr(train, "visible_gpus", lambda: 2)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    captured = {}
    monkeypatch.setattr(train, "run_logged", lambda command, env, history: captured.update(command=command, env=env) or 1)
    with pytest.raises(SystemExit):
        train.main(args_for(tmp_path, data, "--gpus", "2", "--workers", "4"))
    assert "--fp16" in captured["command"] and "--cpu" not in captured["command"]
    assert captured["command"][captured["command"].index("--num-workers") + 1] == "4", "data loader processes"
    assert captured["env"]["CUDA_VISIBLE_DEVICES"] == "3,5", "a scheduler's CUDA_VISIBLE_DEVICES is never overwritten"
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "3,5"


def test_asking_for_more_gpus_than_visible_is_an_error(tmp_path, monkeypatch, capsys):
    data = make_bin(tmp_path)
    monkeypatch.setattr(train, "visible_gpus", lambda: 1)
    with pytest.raises(SystemExit) as exit_:
        train.main(args_for(tmp_path, data, "--gpus", "4"))
    assert exit_.value.code == 1
    assert "asks for 4 GPUs, but only 1 are visible" in capsys.readouterr().err


def test_publish_is_atomic_and_refuses_a_missing_best(tmp_path):
    with pytest.raises(InputError, match="without a best checkpoint"):
        train.publish(tmp_path / "checkpoint_best.pt", tmp_path / "out.pt")
    (tmp_path / "checkpoint_best.pt").write_bytes(b"weights")
    train.publish(tmp_path / "checkpoint_best.pt", tmp_path / "out" / "best.pt")
    assert (tmp_path / "out" / "best.pt").read_bytes() == b"weights"
    assert not list((tmp_path / "out").glob(".*tmp"))


def test_fairseq_checkpoint_copies_are_atomic(tmp_path, monkeypatch):
    """fairseq copies checkpoint_last.pt with a plain copyfile; ours never exposes a partial file."""
    import shutil

    from docnmt.train import fairseq_train
    from fairseq.file_io import PathManager

    (tmp_path / "src.pt").write_bytes(b"complete checkpoint")
    (tmp_path / "checkpoint_last.pt").write_bytes(b"previous checkpoint")
    real_copyfile = shutil.copyfile

    def dying_copyfile(src, dst):
        real_copyfile(src, dst)
        raise KeyboardInterrupt("killed during the copy")

    monkeypatch.setattr(PathManager, "copy", PathManager.copy)
    fairseq_train.patch()
    monkeypatch.setattr(shutil, "copyfile", dying_copyfile)
    with pytest.raises(KeyboardInterrupt):
        PathManager.copy(str(tmp_path / "src.pt"), str(tmp_path / "checkpoint_last.pt"), overwrite=True)
    assert (tmp_path / "checkpoint_last.pt").read_bytes() == b"previous checkpoint"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint_last.pt", "src.pt"]
    monkeypatch.setattr(shutil, "copyfile", real_copyfile)
    assert PathManager.copy(str(tmp_path / "src.pt"), str(tmp_path / "checkpoint_last.pt"), overwrite=True)
    assert (tmp_path / "checkpoint_last.pt").read_bytes() == b"complete checkpoint"

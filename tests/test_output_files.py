"""Output files are written whole or not at all (fastrank.output): a per-user file in every
format, a plot in every format and the command's outputs that cannot be written (a full
disk, a file-size limit) fail with one line naming the file, and leave no partial file
behind; a file that was there stays as it was."""

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import fastrank as fr
from fastrank import output
from fastrank.io.files import write_per_user
from fastrank.synthetic import power_law

ROOT = Path(__file__).resolve().parent.parent
PER_USER = ("u.csv", "u.tsv", "u.jsonl", "u.csv.gz", "u.tsv.gz", "u.jsonl.gz", "u.parquet")
PLOTS = ("p.png", "p.svg", "p.pdf")
LIMIT = 16_384  # bytes: every file below passes it

# what each writer writes: a per-user table, and a figure of many points
WRITERS = textwrap.dedent("""
    import numpy as np
    from fastrank.io.files import write_per_user

    def table():
        rng = np.random.default_rng(0)
        return {"user": np.array([f"user{i}" for i in range(20_000)]),
                "ndcg@10": rng.random(20_000), "recall@10": rng.random(20_000)}

    def figure():
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib.figure import Figure
        fig = Figure()
        fig.add_subplot(1, 1, 1).plot(np.random.default_rng(0).random(30_000))
        return fig

    def write(path):
        import fastrank.plots
        if path.endswith(("png", "svg", "pdf")):
            fastrank.plots._save(figure(), path)
        else:
            write_per_user(path, table())
""")


def _scope(tmp_path):
    namespace = {}
    exec(WRITERS, namespace)  # the same writers in this process as in the limited one
    return namespace


def leftovers(folder):
    return sorted(p.name for p in Path(folder).iterdir() if p.name.endswith(".partial"))


def limited(script, tmp_path, limit=LIMIT):
    """Run `script` in a fresh Python whose files may not pass `limit` bytes (SIGXFSZ
    ignored, as Python starts: a write past the limit fails with EFBIG)."""
    def restrict():
        import resource
        import signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=tmp_path, preexec_fn=restrict, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg"))


@pytest.mark.parametrize("name", PER_USER + PLOTS)
def test_a_file_size_limit_fails_naming_the_file_and_leaves_nothing(tmp_path, name):
    script = WRITERS + textwrap.dedent(f"""
        import json
        try:
            write({name!r})
        except OSError as err:
            print(json.dumps([type(err).__name__, str(err), err.errno, err.filename]))
    """)
    done = limited(script, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    kind, message, code, filename = json.loads(done.stdout)
    role = "" if name in PLOTS else "--per-user "
    assert (kind, code, filename) == ("UnwritableFile", errno.EFBIG, name)
    assert message == (f"{role}{name}: cannot be written (File too large); it passes the "
                       f"largest file allowed (ulimit -f, or the file system's limit): "
                       f"raise the limit or write it elsewhere; no partial file was left")
    assert os.listdir(tmp_path) == []  # neither the file nor its temporary


@pytest.mark.parametrize("name", PER_USER + PLOTS)
def test_a_file_that_was_there_stays_as_it_was(tmp_path, name):
    (tmp_path / name).write_bytes(b"the earlier file")
    os.chmod(tmp_path / name, 0o640)
    done = limited(WRITERS + f"write({name!r})", tmp_path)
    assert done.returncode == 1
    assert f"{name}: cannot be written (File too large)" in done.stderr
    assert "the file there is as it was" in done.stderr.splitlines()[-1]
    assert (tmp_path / name).read_bytes() == b"the earlier file"
    assert leftovers(tmp_path) == []
    # and written whole, it replaces the file, keeping its permissions
    _scope(tmp_path)["write"](str(tmp_path / name))
    assert (tmp_path / name).stat().st_size > LIMIT
    assert oct((tmp_path / name).stat().st_mode & 0o777) == oct(0o640)
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("name", PER_USER + PLOTS)
def test_a_full_disk_fails_naming_the_file(tmp_path, name):
    """/dev/full fails every write with ENOSPC; a name with the writer's suffix links to
    it. A device is written in place: it is neither replaced nor removed."""
    (tmp_path / name).symlink_to("/dev/full")
    with pytest.raises(output.UnwritableFile) as caught:
        _scope(tmp_path)["write"](str(tmp_path / name))
    role = "" if name in PLOTS else "--per-user "
    assert str(caught.value) == (f"{role}{tmp_path / name}: cannot be written (No space "
                                 f"left on device); free space on its disk, or write it "
                                 f"elsewhere")
    assert caught.value.errno == errno.ENOSPC
    assert Path("/dev/full").is_char_device() and (tmp_path / name).is_symlink()
    assert leftovers(tmp_path) == [] and leftovers("/dev") == []


class FullDisk:
    """A binary file whose writes fail with ENOSPC once `room` bytes are written."""

    def __init__(self, handle, room):
        self.handle, self.room = handle, room

    def write(self, data):
        self.room -= len(data)
        if self.room < 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self.handle.write(data)

    def __getattr__(self, name):
        return getattr(self.handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()


@pytest.mark.parametrize("name", PER_USER + PLOTS)
def test_a_disk_that_fills_up_leaves_no_partial_file(tmp_path, name, monkeypatch):
    monkeypatch.setattr(output, "open", lambda path, mode: FullDisk(open(path, mode), 4096),
                        raising=False)
    with pytest.raises(output.UnwritableFile, match=f"{name}: cannot be written .No space "
                                                    f"left on device.; free space on its "
                                                    f"disk, or write it elsewhere; no "
                                                    f"partial file was left$"):
        _scope(tmp_path)["write"](str(tmp_path / name))
    assert os.listdir(tmp_path) == []


def test_the_command_says_it_in_one_line_and_leaves_nothing(tmp_path):
    truth, topk = power_law(3000, 200, 10, seed=0)
    import scipy.sparse as sp
    sp.save_npz(tmp_path / "t.npz", truth)
    np.save(tmp_path / "k.npy", topk)
    script = ("import sys; from fastrank.cli import main; sys.exit(main(['evaluate', "
              "'--truth', 't.npz', '--topk', 'k.npy', '-m', 'ndcg@10', '--no-progress', "
              "'--per-user', 'u.csv']))")
    done = limited(script, tmp_path, limit=32_768)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("fastrank evaluate: error: --per-user u.csv: cannot be written "
                           "(File too large); it passes the largest file allowed (ulimit "
                           "-f, or the file system's limit): raise the limit or write it "
                           "elsewhere; no partial file was left\n")
    assert sorted(os.listdir(tmp_path)) == ["k.npy", "t.npz"]


def test_the_demo_s_plot_says_it_in_one_line(tmp_path, monkeypatch, capsys):
    """The demo's --compare figure goes through the same writer."""
    from fastrank import cli

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    (tmp_path / "c.png").symlink_to("/dev/full")
    code = cli.main(["demo", "--users", "2000", "--items", "300", "-k", "5", "--no-progress",
                     "--compare", str(tmp_path / "c.png")])
    err = capsys.readouterr().err
    assert code == 2 and err == (f"fastrank demo: error: {tmp_path / 'c.png'}: cannot be "
                                 f"written (No space left on device); free space on its "
                                 f"disk, or write it elsewhere\n")


def test_a_plot_to_a_file_object_names_it(tmp_path):
    res = fr.evaluate(*power_law(100, 50, 3, seed=1), ["ndcg"], curves=True)
    with open("/dev/full", "wb", buffering=0) as handle, pytest.raises(
            output.UnwritableFile, match="^/dev/full: cannot be written .No space left on "
                                         "device.; free space"):
        res.plot("ndcg", path=handle)

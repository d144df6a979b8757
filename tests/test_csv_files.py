"""The CSV reader of `fastrank evaluate`: pyarrow's reader where it is installed, the line
reader otherwise and for every file pyarrow reads differently. Both must give the same
arrays, or the same error naming the line."""

import gzip

import numpy as np
import pytest

from fastrank.io import files

HEADER = "user,item,score\n"
TEXTS = {
    "clean": HEADER + "u1,a,0.5\nu1,b,2\nu2,a,1e3\n",
    "integer ids": HEADER + "10,1,1\n9,2,1.5\n-3,0,2\n",
    "integers with zeros in front": HEADER + "01,1,1\n2,2,1\n",
    "a signed integer": HEADER + "+1,1,1\n2,2,1\n",
    "ids past int64": HEADER + "99999999999999999999,1,1\n",
    "quoted fields": HEADER + 'u1,"x,y",1\n"u 2",a,2\n',
    "spaces in ids": HEADER + " u1,a ,1\n",
    "crlf": "user,item,score\r\nu1,a,1\r\nu2,b,2\r\n",
    "lone cr": "user,item,score\ru1,a,1\ru2,b,2\r",
    "byte-order mark": "\ufeff" + HEADER + "u1,a,1\n",
    "blank lines": HEADER + "u1,a,1\n\nu2,b,2\n\n",
    "a line of blanks": HEADER + "u1,a,1\n   \nu2,b,2\n",
    "header only": HEADER,
    "unicode ids": HEADER + "ünï,çødé,1\n\u0661,b,2\n",
    "numbers as C and Python write them": HEADER + "u,a,.5\nu,b,+1\nu,c,1.\nu,d,-0\n",
    "a number with blanks": HEADER + "u,a, 2\n",
    "a number with grouping": HEADER + "u,a,1_0\n",
    "a non-ASCII digit as a number": HEADER + "u,a,\u0661\n",
    "nan": HEADER + "u,a,nan\n",
    "inf": HEADER + "u,a,inf\n",
    "NA": HEADER + "u,a,NA\n",
    "an empty number": HEADER + "u,a,\n",
    "an empty id": HEADER + "u,,1\n",
    "a blank id": HEADER + "u,\u2003,1\n",
    "a missing field": HEADER + "u,a\n",
    "an extra field": HEADER + "u,a,1,2\n",
    "another column": "user,item,score,note\nu,a,1,\nu,b,2,NA\n",
    "a repeated column": "user,item,item\nu,a,b\n",
    "empty file": "",
    "not UTF-8": None,
}


def _write(path, text):
    if text is None:
        path.write_bytes(HEADER.encode() + b"u,\xff,1\n")
    else:
        path.write_text(text, encoding="utf-8", newline="")


def _read(path, reader):
    """(arrays or None, error message or None), ids turned into integers as
    read_inputs turns them."""
    try:
        table = reader(path)
    except ValueError as err:
        return None, str(err)
    for column in ("user", "item"):
        files._integer_ids(column, table)
    return table, None


def _lines(path):
    delimiter = "\t" if ".tsv" in path.suffixes else ","
    return files._read_csv_lines(path, delimiter)


@pytest.mark.parametrize("name", list(TEXTS))
@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_both_readers_give_the_same_arrays_or_error(tmp_path, name, suffix):
    path = tmp_path / f"t{suffix}"
    _write(tmp_path / "plain", TEXTS[name])
    data = (tmp_path / "plain").read_bytes()
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    fast, fast_error = _read(path, files.read_csv)
    slow, slow_error = _read(path, _lines)
    assert fast_error == slow_error
    if slow is None:
        return
    assert list(fast) == list(slow)
    for column in slow:
        assert fast[column].dtype == slow[column].dtype, column
        assert np.array_equal(fast[column], slow[column]), column


def test_tab_separated_files_and_the_arrow_reader_is_used(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("user\titem\trelevance\nu1\t7\t1\nu2\t8\t2\n")
    fast = files._read_csv_arrow(path, "\t")
    assert fast is not None and fast.from_text == {"item"}
    assert fast["item"].tolist() == [7, 8] and fast["user"].tolist() == ["u1", "u2"]
    slow = _lines(path)
    files._integer_ids("item", slow)
    assert all(np.array_equal(fast[c], slow[c]) for c in slow)
    # a file with a blank line is the line reader's
    path.write_text("user\titem\trelevance\nu1\t7\t1\n \nu2\t8\t2\n")
    assert files._read_csv_arrow(path, "\t") is None


def test_integer_ids_in_one_file_and_text_in_the_other_stay_text(tmp_path):
    (tmp_path / "t.csv").write_text("user,item,relevance\n1,10,1\n2,11,1\n")
    (tmp_path / "r.csv").write_text("user,item,score\n1,10,1\n2,x11,1\n")
    truth, recs = files.read_csv(tmp_path / "t.csv"), files.read_csv(tmp_path / "r.csv")
    assert truth["item"].dtype == np.int64  # plain integers, as far as this file goes
    for column in ("user", "item"):
        files._integer_ids(column, truth, recs)
    assert truth["user"].dtype == recs["user"].dtype == np.int64
    assert truth["item"].tolist() == ["10", "11"] and recs["item"].tolist() == ["10", "x11"]
    inputs = files.read_inputs(tmp_path / "t.csv", tmp_path / "r.csv")
    assert inputs.user_ids.tolist() == [1, 2] and inputs.topk.tolist() == [[0], [2]]

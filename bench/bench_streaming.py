"""asv: 10,000,000 users x K = 10 streamed from memory-mapped .npy files through
fr.Evaluator in blocks of 1,000,000, beside one in-memory fr.evaluate of the same data.

peakmem_ counts resident memory, which includes the mapped files' clean pages (page
cache); `python bench/streaming.py` separates private memory from those pages.
"""

import numpy as np
import scipy.sparse as sp

import fastrank as fr

from .streaming import METRICS, files

N_USERS = 10_000_000
BLOCK = 1_000_000


def _truth(arrays):
    return sp.csr_array((arrays["data"], arrays["indices"], arrays["indptr"]),
                        shape=(N_USERS, 50_000))


def _warm():
    small = sp.csr_array(np.eye(4))
    fr.Evaluator(small, ["ndcg@2", "map@2"]).update(None, np.array([[0, 1]] * 4)).result()
    fr.evaluate(small, np.array([[0, 1]] * 4), ["ndcg@2", "map@2"])


class Streaming:
    timeout = 900

    def setup(self):
        paths = files(N_USERS, 10)
        self.maps = {name: np.load(path, mmap_mode="r") for name, path in paths.items()}
        _warm()

    def _stream(self):
        ev = fr.Evaluator(_truth(self.maps), METRICS)
        topk = self.maps["topk"]
        for lo in range(0, N_USERS, BLOCK):
            ev.update(np.arange(lo, lo + BLOCK), topk[lo:lo + BLOCK])
        return ev.result()

    def time_stream_memory_mapped(self):
        self._stream()

    def peakmem_stream_memory_mapped(self):
        self._stream()


class InMemory:
    timeout = 900

    def setup(self):
        paths = files(N_USERS, 10)
        self.arrays = {name: np.load(path) for name, path in paths.items()}
        _warm()

    def time_evaluate_in_memory(self):
        fr.evaluate(_truth(self.arrays), self.arrays["topk"], METRICS)

    def peakmem_evaluate_in_memory(self):
        fr.evaluate(_truth(self.arrays), self.arrays["topk"], METRICS)

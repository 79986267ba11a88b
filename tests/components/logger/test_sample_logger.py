"""SampleLogger, the one recorder of samples to .npz (the examples' Recorder keeps only
statistics): every sample in order with its stamp, samples of another width or beyond
max_samples counted as dropped, the file written at deactivation, the digest of two equal
streams equal."""

from __future__ import annotations

import numpy as np

from rtcf import TimedDoubleSeq
from rtcf.lifecycle import LifeCycleState
from rtcf.testing import Harness

from rtcf_components.logger.component import SampleLogger


def sample(t: float, values) -> TimedDoubleSeq:
    s = TimedDoubleSeq(data=np.asarray(values, dtype=float))
    s.tm.sec, s.tm.nsec = int(t), int(round((t - int(t)) * 1e9))
    return s


def run(tmp_path, name: str, rows, **params):
    path = tmp_path / f"{name}.npz"
    h = Harness(SampleLogger, params={"path": str(path), **params}, rate=100)
    try:
        h.activate()
        for k, row in enumerate(rows):
            h.write("in", sample(0.01 * k, row))
            h.step()
        h.deactivate()
        with np.load(path) as z:
            return {k: z[k] for k in z.files}, h.comp
    finally:
        h.close()


def test_every_sample_with_its_stamp_is_written_at_deactivation(tmp_path):
    rows = [[k, 2.0 * k, -k] for k in range(5)]
    got, comp = run(tmp_path, "a", rows)
    assert np.array_equal(got["data"], np.array(rows, dtype=float))
    assert np.allclose(got["t"], 0.01 * np.arange(5), atol=1e-9)
    assert comp.count == 5 and comp.dropped == 0


def test_other_widths_and_overflow_are_dropped_and_counted(tmp_path):
    rows = [[1.0, 2.0], [3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0]]
    got, comp = run(tmp_path, "b", rows, max_samples=3)
    assert got["data"].tolist() == [[1.0, 2.0], [4.0, 5.0], [6.0, 7.0]]
    assert comp.dropped == 2                # the narrow sample, the one beyond max_samples


def test_equal_streams_have_equal_digests(tmp_path):
    rows = [[np.sin(k), np.cos(k)] for k in range(20)]
    _, a = run(tmp_path, "c", rows)
    _, b = run(tmp_path, "d", rows)
    _, c = run(tmp_path, "e", rows[:-1] + [[0.0, 0.0]])
    assert a.digest() == b.digest() != c.digest()


def test_an_empty_first_sample_is_dropped_and_the_width_taken_from_the_next(tmp_path):
    got, comp = run(tmp_path, "f", [[], [1.0, 2.0], [3.0, 4.0]])
    assert got["data"].tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert comp.dropped == 1


def test_a_path_that_cannot_be_written_is_refused_before_start(tmp_path):
    from rtcf_components.logger.component import path_problem
    (tmp_path / "afile").write_text("x")
    assert path_problem("") == ""
    assert path_problem(str(tmp_path / "new" / "deeper" / "q.npz")) == ""
    assert "is a file, not a folder" in path_problem(str(tmp_path / "afile" / "sub" / "q.npz"))
    assert "is a folder" in path_problem(str(tmp_path))


def test_a_file_that_cannot_be_written_at_deactivation_is_an_error_not_a_crash(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    h = Harness(SampleLogger, params={"path": str(folder / "q.npz")}, rate=100)
    try:
        h.activate()
        for k in range(3):
            h.write("in", sample(0.01 * k, [k, k]))
            h.step()
        folder.rmdir()
        folder.write_text("in the way")             # the folder became a file meanwhile
        h.deactivate()
        assert h.state is LifeCycleState.ERROR
        assert "could not write" in h.comp.save_error and "q.npz" in h.comp.save_error
        assert h.comp.written == ""
    finally:
        h.close()


def test_samples_are_kept_bit_for_bit_whatever_their_layout_or_type():
    from rtcf_components.logger.buffer import SampleBuffer
    nan_payload = np.frombuffer(np.uint64(0x7FF8_0000_0000_1234).tobytes(), np.float64)[0]
    rows = [np.array([-0.0, nan_payload, 5e-324, -np.inf]),
            np.arange(8.0)[::2],                                  # not contiguous
            np.array([1.5, 2.5, 3.5, 4.5], dtype=np.float32),     # converted
            np.array([1.0, 2.0, 3.0, 4.0], dtype=">f8")]          # other byte order
    for columns in (0, 4):                                        # width from the first
        b = SampleBuffer(8, columns)
        for k, r in enumerate(rows):
            assert b.append(0.5 * k, r)
        assert not b.append(9.0, np.zeros(3)) and b.dropped == 1
        t, d = b.samples()
        want = np.array([np.asarray(r, dtype=np.float64) for r in rows])
        assert d.tobytes() == want.tobytes()
        assert t.tolist() == [0.0, 0.5, 1.0, 1.5]

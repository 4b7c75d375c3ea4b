"""One conformance suite for both places a run directory can live: a POSIX directory and an S3 prefix.

The S3 side is moto's real server in its own process (tests/s3server.py); the
same assertions run against both, as Zarr runs its store tests against each store.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from epcg.runtime.errors import UserError
from epcg.runtime.rundir import Location, ObjectLocation, PosixLocation, is_url, open_location


@pytest.fixture(params=["posix", "s3"])
def location(request, tmp_path) -> Location:
    if request.param == "posix":
        return PosixLocation(tmp_path / "run")
    bucket = request.getfixturevalue("bucket")
    return open_location(f"{bucket}/some/prefix")


def test_read_write_delete_list(location):
    assert location.read("job.toml") is None and location.is_empty()
    location.write("job.toml", b"name = 'x'\n")
    location.write("manifest/a.json", b"{}")
    location.write("manifest/b.json", b"{}")
    location.write("manifestx/c.json", b"{}")
    assert location.read("job.toml") == b"name = 'x'\n"
    assert location.list("manifest/") == ["manifest/a.json", "manifest/b.json"]
    assert set(location.list()) == {"job.toml", "manifest/a.json", "manifest/b.json", "manifestx/c.json"}
    location.delete("manifest/a.json")
    location.delete("manifest/never.json")
    assert location.list("manifest/") == ["manifest/b.json"] and not location.is_empty()
    location.write("job.toml", b"replaced")
    assert location.read("job.toml") == b"replaced"


def test_create_never_overwrites(location):
    assert location.create("manifest/t.json", b"first")
    assert not location.create("manifest/t.json", b"second")
    assert location.read("manifest/t.json") == b"first"


def test_create_race_has_one_winner(location):
    wins: list[bool] = []
    threads = [threading.Thread(target=lambda i=i: wins.append(location.create("r.json", str(i).encode())))
               for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wins.count(True) == 1
    assert location.read("r.json") in {str(i).encode() for i in range(8)}


def test_replace_is_compare_and_swap(location):
    location.write("run.json", b'{"epoch": 1}')
    data, version = location.read_versioned("run.json")
    assert data == b'{"epoch": 1}'
    assert location.replace("run.json", b'{"epoch": 2}', version)
    assert not location.replace("run.json", b'{"epoch": 3}', version)  # a stale client writes nothing
    assert location.read("run.json") == b'{"epoch": 2}'
    assert not location.replace("gone.json", b"x", version)
    assert location.read("gone.json") is None


def test_lock_excludes_a_second_client(location):
    assert not location.is_locked()
    with location.lock("pid 1"):
        assert location.is_locked()
        with pytest.raises(UserError, match="in use by another epcg"):
            with location.lock("pid 2"):
                pass
    assert not location.is_locked()
    with location.lock("pid 3"):
        pass


def test_zarr_arrays_and_sync(location):
    import zarr

    group = zarr.open_group(location.zarr_store("store.zarr"), mode="w-")
    array = group.create_array("solvable/3", shape=(100,), dtype="uint64", chunks=(10,))
    array[20:30] = np.arange(10, dtype=np.uint64)
    location.sync(["store.zarr/solvable/3/c/2", "store.zarr/solvable/3/zarr.json"])
    again = zarr.open_group(location.zarr_store("store.zarr"), mode="r")
    assert again["solvable/3"][25] == 5
    assert "store.zarr/solvable/3/c/2" in location.list("store.zarr/")


def test_publish_and_local_copy(location, tmp_path):
    drawn = tmp_path / "drawn"
    drawn.mkdir()
    (drawn / "a.png").write_bytes(b"png")
    assert location.publish("figures", drawn) == ["figures/a.png"]
    assert (location.local_copy("figures/") / "a.png").read_bytes() == b"png"


def test_a_file_written_through_a_local_path_is_stored_at_its_key(location):
    """A writer that takes a filename (Dask's performance report) writes through ``written_through``: both keep the
    file at its key; only a filesystem gives the key a path of its own, and only an object store counts requests."""
    location.write("job.toml", b"")
    with location.written_through("performance-report.html") as local:
        local.write_text("<html>")
    with location.written_through("never-written.html"):
        pass
    assert location.read("performance-report.html") == b"<html>" and location.read("never-written.html") is None
    own = location.local_path("performance-report.html")
    assert (own is None) == location.metered == (location.io() is not None)
    assert str(location.address("performance-report.html")) == location.describe("performance-report.html")
    assert own is None or own.read_bytes() == b"<html>"


def test_scratch_is_dropped_only_where_it_is_a_copy(location):
    """A filesystem's scratch is the run's own directory and is kept; an object store's is this machine's copy."""
    location.write("job.toml", b"")
    figures = location.scratch("figures")
    figures.mkdir(parents=True, exist_ok=True)
    (figures / "a.png").write_bytes(b"png")
    location.drop_scratch("figures")
    assert (figures / "a.png").exists() == (location.local_path() is not None)


def test_requests_are_counted_where_the_location_is_metered(location):
    before = location.io()
    location.write("job.toml", b"x")
    location.check_conditional()  # a filesystem has nothing to check; moto honours If-None-Match: *
    after = location.io()
    assert location.list() == ["job.toml"]
    assert (before is None and after is None) if not location.metered else after["requests"] > before["requests"]


def test_urls_are_never_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert isinstance(open_location("file://" + str(tmp_path / "x")), PosixLocation)
    assert is_url("s3://bucket/joint") and not is_url(tmp_path / "s3:" / "x")
    with pytest.raises(UserError, match="names no bucket"):
        open_location("s3:///prefix")
    assert not any(tmp_path.iterdir())


def test_object_location_pickles_without_credentials(bucket):
    import pickle

    location = open_location(bucket + "/p")
    data = pickle.dumps(location)
    assert b"testing" not in data and pickle.loads(data).where == bucket + "/p"


def test_lease_is_seen_by_another_process(bucket, tmp_path):
    """The lock holds across processes (and so machines): a second process is refused while the lease lives."""
    location = open_location(bucket + "/leased")
    code = ("import sys\nfrom epcg.runtime.rundir import open_location\nfrom epcg.runtime.errors import UserError\n"
            f"loc = open_location({location.where!r})\n"
            "try:\n    loc.lock('other').__enter__()\nexcept UserError as e:\n    print(e); sys.exit(2)\n")
    with location.lock("pid 1"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "in use by another epcg client (pid 1)" in out.stdout
    assert json.loads(location.read(".lock") or b"null") is None  # released: the lease object is gone
    assert isinstance(location, ObjectLocation)


def test_conditional_writes_are_honoured(bucket):
    open_location(bucket + "/probe").check_conditional()  # moto refuses the second If-None-Match: * PUT
    assert open_location(bucket + "/probe").list() == []


def test_posix_lock_file_is_not_content(tmp_path):
    location = PosixLocation(tmp_path / "run")
    with location.lock("pid 1"):
        assert location.is_empty()
    assert Path(location.where, ".lock").exists() and location.is_empty()


def test_a_task_reads_the_store_metadata_once_per_array(tmp_path, monkeypatch):
    """Writing two arrays' slices, syncing them and measuring them opens the group once and each array once: each
    opening is a trip through Zarr's event loop on a worker whose cores are busy, and a request on an object store."""
    import zarr
    from zarr.storage import LocalStore

    from epcg.runtime.plan import Task
    from epcg.runtime.arrays import ZARR
    from epcg.runtime.store import RunDir

    group = zarr.open_group(LocalStore(tmp_path / ZARR), mode="w-")
    for name in ("solvable/9", "unique/9"):
        group.create_array(name, shape=(64,), dtype="uint64", chunks=(16,), fill_value=0)
    reads: list[str] = []
    get = LocalStore.get

    async def counted(self, key, *args, **kwargs):
        reads.append(key)
        return await get(self, key, *args, **kwargs)

    monkeypatch.setattr(LocalStore, "get", counted)
    run = RunDir(tmp_path)
    for name in ("solvable/9", "unique/9"):
        run.arrays.write_slice(name, 16, np.arange(16, dtype=np.uint64))
    run.records.write(Task("k09", 1, 16, 32), {"task": "k09/00001", "bytes": run.arrays.bytes_written()})
    assert sorted(reads) == ["solvable/9/zarr.json", "unique/9/zarr.json", "zarr.json"]
    assert np.array_equal(RunDir(tmp_path).arrays.read_array("unique/9")[16:32], np.arange(16))


def test_an_all_zero_slice_is_stored_and_overwrites_what_its_chunk_held(tmp_path):
    """A task's all-zero chunk is written like any other (Zarr is not asked to compare it with the fill value first),
    so its file exists, is fsynced with the rest, and replaces whatever an earlier write left there."""
    import zarr
    from zarr.storage import LocalStore

    from epcg.runtime.arrays import ZARR
    from epcg.runtime.store import RunDir

    group = zarr.open_group(LocalStore(tmp_path / ZARR), mode="w-")
    group.create_array("solvable/9", shape=(64,), dtype="uint64", chunks=(16,), fill_value=0)
    chunk = tmp_path / ZARR / "solvable/9/c/1"
    RunDir(tmp_path).arrays.write_slice("solvable/9", 16, np.arange(1, 17, dtype=np.uint64))
    RunDir(tmp_path).arrays.write_slice("solvable/9", 16, np.zeros(16, dtype=np.uint64))
    assert chunk.is_file()
    assert not RunDir(tmp_path).arrays.read_array("solvable/9").any()

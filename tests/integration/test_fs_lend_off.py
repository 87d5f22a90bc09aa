# The boot option fs_lend_on=off (docs/boot.md): seed 003's path, where every readblock goes
# FS -> BLK. Bonnie's 4,000 cached readblocks each reach BLK (with lending on BLK takes a
# fraction of them: test_fs_lends_on.py), and Bonnie with updates still matches its replay.
import pytest

import formica
from test_blk_shards import assert_matches_replay, bonnie_command, disk_copy
from test_fs_lends_on import requests_taken
from test_storage_servers import assert_clean

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 600
READBLOCKS = 4000


def test_every_readblock_reaches_blk_with_lending_off(tmp_path):
    disk = disk_copy(tmp_path)
    large = {"procs": 2, "refs": 1500, "update_pct": 30}
    commands = (f"ls /; servers; run bonnie -p 1 -m readblock -n {READBLOCKS} -u 0 "
                f"-f /small.dat; servers; "
                f"{bonnie_command('run', 'readblock', '/large.dat', 5, **large)}")
    result = formica.run("--smp", "3", "--placement", "5", "--disk", str(disk),
                         "--append", "fs_lend_on=off", "--cmd", commands, timeout=TIMEOUT)
    assert result.rc == 0, result.describe()
    assert "fs: fs_lend_on=off: every readblock goes to BLK" in result.text, result.describe()
    children = result.kinds("bonnie_child")
    assert all(child["mismatches"] == 0 and child["error"] == 0 for child in children), children
    before, after = [group for group in requests_taken(result) if group][:2]
    fs = after["fs"] - before["fs"]
    blk = after["blk"] - before["blk"]
    # Seed 003's path: FS maps each readblock and forwards it, so BLK takes every one.
    assert fs >= READBLOCKS and blk >= READBLOCKS, (fs, blk)
    assert "return failed" not in result.text, result.describe()
    assert_clean(disk)
    assert_matches_replay(disk, tmp_path, "/large.dat", 5, **large)

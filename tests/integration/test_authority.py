# Authority (docs/authority.md): apps/hostile tries every attack of issue 12 as an
# ordinary program the shell started; each must be refused with its error, the
# machine must keep working (files, Bonnie) and e2fsck -fn must find the disk clean.
import shutil
import subprocess

from formica import OUT_DIR, run

HOSTILE_TIMEOUT = 240


def test_every_attack_is_refused_and_the_machine_keeps_working(built, tmp_path):
    image = tmp_path / "disk.img"
    shutil.copyfile(OUT_DIR / "disk.img", image)
    result = run("--smp", "2", "--disk", str(image), "--cmd",
                 "run hostile; ls /; run bonnie -p 2 -m readblock -u 20", timeout=HOSTILE_TIMEOUT)
    cases = result.kinds("hostile")
    assert len(cases) >= 18, result.describe()
    failed = [case for case in cases if not case["ok"]]
    assert not failed, f"not refused as expected: {failed}\n{result.describe()}"
    assert result.kinds("hostile_done") == [{"kind": "hostile_done", "failures": 0}]
    bomb = result.kinds("hostile_bomb")[0]
    assert 0 < bomb["children"] < 256, bomb  # stopped by the account's quota, not the table
    assert result.kinds("bonnie"), result.describe()  # the servers still serve
    assert result.rc == 0, result.describe()
    check = subprocess.run(["e2fsck", "-fn", str(image)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_rights_are_listed_by_ps(built):
    result = run("--smp", "2", "--cmd", "ps", timeout=60)
    assert result.rc == 0, result.describe()
    processes = {entry["name"]: entry for entry in result.kinds("process")}
    assert processes, result.describe()
    assert "admin" in processes["shell"]["rights"]
    assert "block" in processes["fs"]["rights"] and "disk" not in processes["fs"]["rights"]
    assert "disk" in processes["blk"]["rights"]

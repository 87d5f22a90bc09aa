# The pager's sharing (docs/authority.md, docs/pager.md; issue 29): tests/programs/hostilepager, run as
# another user (uid 2001) in accounts of its own, tries each attack on the pager: regions of
# 8-64 GiB, another user's NVM key, every client slot, more memory than its quota, and (as uid
# 0, standing for a failing or tampered backend) overwriting the swap file under a client.
# Each is refused or contained, a normal program of a third account (sort, the shell's user)
# keeps working within about 2x its undisturbed time, and e2fsck -fn finds the disk clean.
import shutil
import subprocess

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 300
SORT = "run sort -n 3000 -l 256K -b 16K --backend nvm"
# The normal program on core 1, the attacker on core 0 with the servers (the default placement).
SORT_1 = SORT + " @1"
PERSIST = "-s 1M -l 256K -b 16K --backend nvm --key 7"
E_PERMISSION = -8


def disk_copy(tmp_path):
    copy = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", copy)
    return copy


def boot(commands, *flags):
    return formica.run("--smp", "2", "--accel", "tcg", *flags, "--cmd", commands,
                       timeout=TIMEOUT)


def assert_clean(image):
    check = subprocess.run(["e2fsck", "-fn", str(image)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def cases(result):
    return {case["case"]: case for case in result.kinds("hostile_pager")}


def test_pager_attacks_of_another_user_are_refused(tmp_path):
    image = disk_copy(tmp_path)
    commands = "; ".join([
        SORT_1,  # undisturbed
        f"run memseq --mode persist-write {PERSIST}",  # the shell's user (uid 1000) makes key 7
        "run --user 2001 hostilepager key 7",
        f"run --user 0 memseq --mode persist-check {PERSIST}",  # uid 0 may reattach it
        "run --user 2001 hostilepager tables",
        "run --user 2001 --memory 1M hostilepager charge",
        "run --user 2001 hostilepager backend 100M",  # of the 128 MiB NVM
        "run --user 2001 hostilepager keys 40M",
        "start --user 2001 hostilepager slots 5000", SORT_1, "wait",
        "start --user 2001 --memory 16M hostilepager quota 16M @0", SORT_1, "wait",
        SORT_1,  # undisturbed again
        # reported, not asserted: the attacker on core 1, the sort on the pager's core 0
        SORT + " @0", "start --user 2001 --memory 16M hostilepager quota 16M @1", SORT + " @0",
        "wait",
    ])
    result = boot(commands, "--disk", str(image), "--nvm", f"{tmp_path / 'pager.nvm'}:128M")
    found = cases(result)
    failed = [case for case in result.kinds("hostile_pager") if not case["ok"]]
    assert not failed, f"not refused or contained: {failed}\n{result.describe()}"
    # another user's key: -E_PERMISSION and a line; its owner's data is intact for uid 0
    assert found["other_users_key_refused"]["result"] == E_PERMISSION, result.describe()
    assert "pager: NVM key 7 belongs to uid 1000: pid" in result.text, result.describe()
    checks = [line for line in result.kinds("memseq") if line["mode"] == "persist-check"]
    assert checks and checks[0]["reattached"] is True and checks[0]["mismatches"] == 0
    # 8-64 GiB regions: refused before the pager allocates anything; a region it takes is
    # charged to the client's account (12 bytes of policy links per block) and given back
    assert len([name for name in found if name.startswith("region_") and name.endswith("_refused")]) == 12, result.describe()
    tables = result.kinds("hostile_pager_tables")[0]
    assert tables["pager_memory_after"] == tables["pager_memory_before"], tables
    charge = result.kinds("hostile_pager_charge")[0]
    assert charge["memory_with_region"] - charge["memory_after_cleanup"] >= 12 * charge["blocks"]
    assert "more than the pager's 4096 KiB per client" in result.text, result.describe()
    # most of a backend: an account claims at most three quarters of it
    assert found["most_of_a_backend_refused"]["ok"], result.describe()
    assert "more than an account's three quarters" in result.text, result.describe()
    # persistent keys: one user's at most half the NVM
    assert found["keys_beyond_half_the_nvm_refused"]["ok"], result.describe()
    assert "pager: uid 2001's NVM keys would hold" in result.text, result.describe()
    # tables the account cannot pay for: -E_QUOTA, nothing allocated
    assert found["tables_beyond_the_account_quota_refused"]["ok"], result.describe()
    assert "do not fit its account's memory quota" in result.text, result.describe()
    # slots: a quarter of the 16 per account, the refusals logged
    slots = result.kinds("hostile_pager_slots")[0]
    assert (slots["granted"], slots["refused_quota"]) == (4, 4), slots
    assert "refused a client slot: quota exceeded" in result.text, result.describe()
    # quota: the account never above its 16 MiB, the region written and read back whole
    quotas = result.kinds("hostile_pager_quota")
    assert len(quotas) == 2, result.describe()
    for quota in quotas:
        assert quota["verified"] is True and quota["peak_memory"] <= quota["quota"], quota
    assert "account is at its memory quota: its limit is now" in result.text, result.describe()
    # the normal program of a third account: verified every time, within about 2x
    sorts = result.kinds("sort")
    assert len(sorts) == 6 and all(line["verified"] for line in sorts), result.describe()
    undisturbed = min(sorts[0]["elapsed_us"], sorts[3]["elapsed_us"])
    during = {"slots": sorts[1]["elapsed_us"], "quota": sorts[2]["elapsed_us"]}
    print(f"sort on core 1: undisturbed {undisturbed} us, during the attacks {during}; "
          f"on the pager's core 0: undisturbed {sorts[4]['elapsed_us']} us, beside the quota "
          f"attack from core 1 {sorts[5]['elapsed_us']} us")
    for attack, elapsed in during.items():
        # 2x, with a second of slack for a host shared with other QEMUs
        assert elapsed <= 2 * undisturbed + 1_000_000, (attack, elapsed, undisturbed)
    assert_clean(image)


def test_a_corrupted_swap_block_ends_its_client_only(tmp_path):
    # memseq (the victim) writes 1 MiB through a 256 KiB limit and pauses with its blocks on
    # the swap file; uid 0 overwrites the file; memseq's first swap-in does not match its
    # checksum: not mapped, memseq ended with a report naming the block. A sort of another
    # account on the same backend then verifies.
    image = disk_copy(tmp_path)
    result = boot("start memseq -s 1M -l 256K -b 16K --backend disk --pause 3000; "
                  "run --user 0 hostilepager corrupt /swap 512K; wait; "
                  "run sort -n 3000 -l 256K -b 16K --backend disk",
                  "--disk", str(image))
    assert cases(result)["swap_file_overwritten"]["ok"], result.describe()
    corrupt = result.kinds("pager_block_corrupt")
    assert corrupt and corrupt[0]["backend"] == "disk", result.describe()
    block = corrupt[0]["block"]
    assert (f"pager: block {block} of pid {corrupt[0]['pid']}" in result.text
            and "does not match what was stored" in result.text), result.describe()
    assert "'memseq' (pid" in result.text and "killed by page fault" in result.text
    assert not [line for line in result.kinds("memseq") if line.get("verified")]
    sorts = result.kinds("sort")
    assert sorts and sorts[0]["verified"] is True, result.describe()
    assert_clean(image)


def test_a_corrupted_nvm_block_is_caught_after_a_reboot(tmp_path):
    # The checksums of a persistent key's blocks are kept in the NVM beside its block map:
    # bytes changed on the NVDIMM between two boots are caught at the swap-in.
    nvm = tmp_path / "pager.nvm"
    first = boot(f"run memseq --mode persist-write {PERSIST}", "--nvm", f"{nvm}:16M")
    assert first.rc == 0, first.describe()
    data = bytearray(nvm.read_bytes())
    # unit 0 is the header, unit 1 key 7's map and checksums; its 16 KiB blocks from unit 4
    data[4 * 4096:4 * 4096 + (1 << 20)] = b"\x5a" * (1 << 20)
    nvm.write_bytes(bytes(data))
    second = boot(f"run memseq --mode persist-check {PERSIST}; run hello",
                  "--nvm", f"{nvm}:16M")
    corrupt = second.kinds("pager_block_corrupt")
    assert corrupt and corrupt[0]["backend"] == "nvm", second.describe()
    assert "killed by page fault" in second.text, second.describe()
    assert second.kinds("hello"), second.describe()

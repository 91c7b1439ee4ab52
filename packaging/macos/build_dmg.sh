#!/usr/bin/env bash
# Attention Lab: macOS app bundle and disk image.
#
# *** UNTESTED: written on Linux, never run on macOS by this project. ***
# The PyInstaller spec is shared with Linux (where the bundle is verified) and builds
# "dist/Attention Lab.app" on macOS through its BUNDLE() step.
#
# Exact commands, at the repository root, on macOS 12+ with Python 3.11 from python.org
# (or Homebrew) and the Xcode command-line tools (`xcode-select --install`):
#
#   python3.11 packaging/dev.py setup
#   bash packaging/macos/build_dmg.sh            # -> dist/attention-lab-<version>-macos-<arch>.dmg
#
# Options (environment): ATTENTION_LAB_BUNDLE_GPT2=/path/to/gpt2 bundles GPT-2 small;
# ATTENTION_LAB_DEMO_MODEL=/path picks another demo model; CODESIGN_IDENTITY="Developer ID
# Application: ..." signs the app (unsigned apps need right-click > Open the first time).
#
# Then check, from another folder with Wi-Fi off:
#   "/Applications/Attention Lab.app/Contents/MacOS/attention-lab-cli" --smoke-test   # exit 0
#   "/Applications/Attention Lab.app/Contents/MacOS/attention-lab-cli" lab --json
set -euo pipefail
cd "$(dirname "$0")/../.."

PY=.venv/bin/python
[ -x "$PY" ] || { echo "no .venv: run python3 packaging/dev.py setup first" >&2; exit 1; }
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' desktop/attention_lab/__init__.py)
ARCH=$(uname -m)
APP="dist/Attention Lab.app"
DMG="dist/attention-lab-${VERSION}-macos-${ARCH}.dmg"

"$PY" -m pip install -c packaging/constraints.txt -r packaging/build-requirements.txt
"$PY" -m PyInstaller packaging/attention_lab.spec --noconfirm --clean \
    --distpath dist --workpath build/pyinstaller
[ -d "$APP" ] || { echo "PyInstaller made no $APP" >&2; exit 1; }

# the frozen app must work before it is wrapped (offscreen: no window appears)
QT_QPA_PLATFORM=offscreen "$APP/Contents/MacOS/attention-lab-cli" --smoke-test

if [ -n "${CODESIGN_IDENTITY:-}" ]; then
  codesign --force --deep --options runtime --timestamp --sign "$CODESIGN_IDENTITY" "$APP"
  codesign --verify --deep --strict "$APP"
fi

# a drag-to-Applications disk image
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
cp -R "$APP" "$STAGE/"
ln -s /Applications "$STAGE/Applications"
rm -f "$DMG"
hdiutil create -volname "Attention Lab ${VERSION}" -srcfolder "$STAGE" -fs HFS+ -format UDZO -imagekey zlib-level=9 -ov "$DMG"
hdiutil verify "$DMG"
du -sh "$APP" "$DMG"
echo "built $DMG"

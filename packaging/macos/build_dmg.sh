#!/usr/bin/env bash
# Attention Lab: macOS app bundle and disk image.
#
# Built and checked by the release workflow (.github/workflows/installers.yml) on a hosted
# macOS runner (Apple silicon); not yet run there: until a run has passed, this script is
# unproven on a Mac.  The PyInstaller spec is shared with Linux (where the bundle is
# verified) and builds "dist/Attention Lab.app" on macOS through its BUNDLE() step.
#
# Exact commands, at the repository root, on macOS 12+ with Python 3.11 from python.org
# (or Homebrew) and the Xcode command-line tools (`xcode-select --install`):
#
#   python3.11 packaging/dev.py setup
#   bash packaging/macos/build_dmg.sh            # -> dist/attention-lab-<version>-macos-<arch>.dmg
#   python3.11 packaging/verify_app.py           # attach it, copy the app out, check it offline
#
# Options (environment): ATTENTION_LAB_BUNDLE_GPT2=/path/to/gpt2 bundles GPT-2 small;
# ATTENTION_LAB_DEMO_MODEL=/path picks another demo model; CODESIGN_IDENTITY="Developer ID
# Application: ..." signs the app with a certificate in the keychain (the release workflow
# imports one with import_signing_identity.sh when its secrets are set).  Unsigned, the app
# carries PyInstaller's ad-hoc signature only, and Gatekeeper blocks its first open from a
# download: Control-click > Open (macOS 15: System Settings > Privacy & Security > Open Anyway).
#
# Writes dist/build-report.json (the .app and .dmg, their sizes) for verify_app.py.
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
QT_QPA_PLATFORM=offscreen "$APP/Contents/MacOS/attention-lab-cli" --smoke-test --all-panels

if [ -n "${CODESIGN_IDENTITY:-}" ]; then
  # hardened runtime: Python and torch need the two exceptions in entitlements.plist
  codesign --force --deep --options runtime --timestamp \
    --entitlements packaging/macos/entitlements.plist --sign "$CODESIGN_IDENTITY" "$APP"
  codesign --verify --deep --strict "$APP"
  QT_QPA_PLATFORM=offscreen "$APP/Contents/MacOS/attention-lab-cli" --smoke-test --all-panels
fi

# a drag-to-Applications disk image
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
ditto "$APP" "$STAGE/$(basename "$APP")"  # keeps links, attributes and the signature
ln -s /Applications "$STAGE/Applications"
rm -f "$DMG"
hdiutil create -volname "Attention Lab ${VERSION}" -srcfolder "$STAGE" -fs HFS+ -format UDZO -imagekey zlib-level=9 -ov "$DMG"
hdiutil verify "$DMG"
du -sh "$APP" "$DMG"
APP_BYTES=$(( $(du -sk "$APP" | cut -f1) * 1024 ))
DMG_BYTES=$(stat -f %z "$DMG")
printf '{\n  "version": "%s",\n  "platform": "darwin",\n  "arch": "%s",\n  "app": "%s",\n  "unpacked_bytes": %s,\n  "dmg": "%s",\n  "dmg_bytes": %s,\n  "signed": %s\n}\n' \
  "$VERSION" "$ARCH" "$APP" "$APP_BYTES" "$DMG" "$DMG_BYTES" "$([ -n "${CODESIGN_IDENTITY:-}" ] && echo true || echo false)" \
  > dist/build-report.json
echo "built $DMG"

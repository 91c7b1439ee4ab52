#!/usr/bin/env bash
# Put a Developer ID signing certificate into a temporary keychain, so that build_dmg.sh
# can sign with CODESIGN_IDENTITY.  The release workflow runs this only when the
# repository's secrets hold a certificate; without them the app is built unsigned.
# Never run by this project yet (no certificate is configured).
#
# Inputs (environment): MACOS_CERTIFICATE_P12_BASE64 (the .p12 export, base64) and
# MACOS_CERTIFICATE_PASSWORD (its password).
set -euo pipefail
: "${MACOS_CERTIFICATE_P12_BASE64:?the .p12 certificate, base64}"
: "${MACOS_CERTIFICATE_PASSWORD:?the .p12 password}"

KEYCHAIN="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/attention-lab-signing.keychain-db"
KEYCHAIN_PASSWORD=$(uuidgen)
P12=$(mktemp)
trap 'rm -f "$P12"' EXIT
printf '%s' "$MACOS_CERTIFICATE_P12_BASE64" | base64 --decode > "$P12"

security create-keychain -p "$KEYCHAIN_PASSWORD" "$KEYCHAIN"
security set-keychain-settings -lut 21600 "$KEYCHAIN"
security unlock-keychain -p "$KEYCHAIN_PASSWORD" "$KEYCHAIN"
security import "$P12" -k "$KEYCHAIN" -P "$MACOS_CERTIFICATE_PASSWORD" -T /usr/bin/codesign
# codesign may use the key without a password prompt
security set-key-partition-list -S apple-tool:,apple: -s -k "$KEYCHAIN_PASSWORD" "$KEYCHAIN" >/dev/null
# search the new keychain first, then the user's others
EXISTING=()
while IFS= read -r line; do
  line="${line#"${line%%[![:space:]]*}"}"
  EXISTING+=("${line//\"/}")
done < <(security list-keychains -d user)
security list-keychains -d user -s "$KEYCHAIN" "${EXISTING[@]}"
security find-identity -v -p codesigning "$KEYCHAIN"

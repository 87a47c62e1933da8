#!/usr/bin/env bash
# Fetches the built Swagger UI that GET /v1/docs serves into
# handlers/reference/swagger-ui/, which the binary embeds. Run it again to
# reproduce the checked-in files, or with another VERSION and INTEGRITY (from
# `npm view swagger-ui-dist@<version> dist.integrity`) to upgrade.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=5.35.0
INTEGRITY=sha512-U06rpMtW9V3XPGOBeamTUSr0Z09jMX4IJuANpE/EZbAhw0G8CgwrzU4YmXkn/h0wCDNsXdGarTNNHC3sU8yVUQ==
dest=handlers/reference/swagger-ui

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "swagger-ui-dist@$VERSION" >/dev/null)
tarball="$tmp/swagger-ui-dist-$VERSION.tgz"
# The pinned hash, not only the registry's word, decides what gets embedded.
got="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [ "$got" != "$INTEGRITY" ]; then
  echo "swagger-ui-dist@$VERSION: got $got, want $INTEGRITY" >&2
  exit 1
fi

# Only the built bundle, its styles and its icon, with the licenses that go
# with them.
files=(swagger-ui-bundle.js swagger-ui-bundle.js.LICENSE.txt swagger-ui.css favicon-32x32.png LICENSE NOTICE)
tar -xzf "$tarball" -C "$tmp" "${files[@]/#/package/}"
rm -rf "$dest"
mkdir -p "$dest"
for f in "${files[@]}"; do
  cp "$tmp/package/$f" "$dest/$f"
done
echo "$VERSION" > "$dest/VERSION"
echo "swagger-ui-dist@$VERSION in $dest"

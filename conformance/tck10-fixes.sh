#!/usr/bin/env bash
# Applies to a restored v1.0 conformance kit (a2aproject/a2a-tck, branch 1.0-dev, as built by
# ../shared/conformance/restore-tck10.sh) the four local fixes docs/CONFORMANCE.md explains, each a
# place where the kit contradicts the spec it cites or breaks on Debian's protobuf, not a place where
# it finds something wrong with the server under test:
#
#   1. the card is fetched with A2A-Version: 1.0 (spec 3.6: no version means 0.3, and a v1.0 client
#      sends the header with each request);
#   2. CORE-SEND-003 checks for the error it names (a2a-tck issue #202);
#   3. the gRPC stub imports the kit's own a2a_pb2 module (a second copy of the module loaded under
#      another name makes every stream event fail the kit's isinstance check on Debian's protobuf);
#   4. STREAM-ORDER-003 compares protobuf events serialized deterministically (map fields, such as
#      google.protobuf.Struct's, re-serialize in any order otherwise).
#
#   conformance/tck10-fixes.sh [KIT_DIR]      (default: ~/.cache/a2a-tck/tck10)
#
# Idempotent: a fix already applied is left as it is. Fails if the kit's code moved (review the fix).
set -euo pipefail
KIT=${1:-${TCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/a2a-tck}/tck10}
[ -f "$KIT/run_tck_debian.sh" ] || { echo "no restored kit at $KIT (run restore-tck10.sh first)" >&2; exit 2; }
cd "$KIT"

# fix FILE OLD NEW: replaces the line OLD by NEW (exact, whole lines), unless NEW is already there.
fix() {
  /usr/bin/python3 - "$@" <<'PY'
import sys
path, old, new = sys.argv[1:4]
text = open(path).read()
if new in text:
    sys.exit(0)
if old not in text:
    sys.exit(f"{path}: the kit changed here (expected {old!r}): review this fix")
open(path, "w").write(text.replace(old, new))
PY
}

for f in tests/compatibility/conftest.py tests/compatibility/agent_card/test_agent_card_caching.py; do
  fix "$f" '    response = httpx.get(url)
' '    response = httpx.get(url, headers={"A2A-Version": "1.0"})
'
done

fix tck/requirements/core_operations.py '    TASK_NOT_FOUND_ERROR,
' '    CONTENT_TYPE_NOT_SUPPORTED_ERROR,
    TASK_NOT_FOUND_ERROR,
'
fix tck/requirements/core_operations.py '        expected_behavior="ContentTypeNotSupportedError returned",
' '        expected_behavior="ContentTypeNotSupportedError returned",
        expected_error=CONTENT_TYPE_NOT_SUPPORTED_ERROR,
'

fix specification/generated/a2a_pb2_grpc.py 'import a2a_pb2 as a2a__pb2
' 'from specification.generated import a2a_pb2 as a2a__pb2
'

fix tests/compatibility/core_operations/test_multi_stream.py \
  '        return event.SerializeToString().hex()' \
  '        return event.SerializeToString(deterministic=True).hex()'

echo "tck10-fixes: 4 fixes in place in $KIT"

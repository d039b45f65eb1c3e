#!/usr/bin/env bash
# Tamper corpus (issue 16, finding 8): tamper_corpus.py.
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/tamper_corpus.py"

# Two commands for a newcomer: `make run` (install, build, start on SQLite) and `make test`.
SHELL := /bin/bash
NPX := npx --no-install

.PHONY: install build run generate lint check-generated test bench bench-profile soak clean

# npm ci only when the lockfile changed since the last install.
node_modules/.installed: package.json package-lock.json
	npm ci
	@touch $@

install: node_modules/.installed

build: install
	$(NPX) tsc -p tsconfig.json

run: build
	node dist/src/server.js

generate: install
	$(NPX) openapi-typescript openapi/v1.yaml -o generated/openapi.ts

check-generated: install
	@$(NPX) openapi-typescript openapi/v1.yaml -o generated/openapi.ts --check \
	  || { echo "generated/ is stale: run 'make generate' and commit it"; exit 1; }

lint: install check-generated
	$(NPX) redocly lint openapi/v1.yaml --format=stylish
	$(NPX) tsc -p tsconfig.json --noEmit

test: lint build
	bash scripts/test.sh

# Throughput of POST /api/v1/ingest/events next to the raw-driver and bare-HTTP ceilings, on SQLite
# and PostgreSQL (when reachable), with a growth run on 2M stored events. About 5 minutes.
# Options by environment, e.g. `BENCH_DURATION=5 BENCH_GROWTH=0 make bench`: see scripts/bench/run.ts.
bench: build
	node dist/scripts/bench/run.js

# The same, plus a CPU-profiled service run per database, summarized (top self-time functions).
bench-profile: build
	BENCH_PROFILE=1 node dist/scripts/bench/run.js

# 60 s of mixed valid and invalid requests; prints the server's RSS at 10 s and 60 s (not part of make test).
soak: build
	node dist/scripts/soak.js

clean:
	rm -rf dist

# Two commands for a newcomer: `make run` (install, build, start on SQLite) and `make test`.
SHELL := /bin/bash
NPX := npx --no-install

.PHONY: install build run generate lint format check-generated test bench bench-read bench-daily bench-summing bench-steps bench-profile bench-web soak clean

# npm ci only when the lockfile changed since the last install.
node_modules/.installed: package.json package-lock.json
	npm ci
	@touch $@

install: node_modules/.installed

# The service (tsc into dist/) and the web console (Vite into dist/web, served at /console/).
build: install
	$(NPX) tsc -p tsconfig.json
	$(NPX) vite build web --logLevel warn

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
	$(NPX) tsc -p web/tsconfig.json
	$(NPX) eslint --max-warnings=0 .
	$(NPX) prettier --check --log-level=warn .

# Rewrites the tree in the project's style (Prettier) and applies ESLint's safe fixes.
format: install
	$(NPX) prettier --write --log-level=warn .
	$(NPX) eslint --fix .

test: lint build
	bash scripts/test.sh

# Throughput of POST /api/v1/ingest/events next to the raw-driver and bare-HTTP ceilings, on SQLite
# and PostgreSQL (when reachable), with a growth run on 2M stored events and the rollups' figures. About 40 minutes.
# Options by environment, e.g. `BENCH_DURATION=5 BENCH_GROWTH=0 make bench`: see scripts/bench/run.ts.
bench: build
	node dist/scripts/bench/run.js

# The same, plus a CPU-profiled service run per database, summarized (top self-time functions).
bench-profile: build
	BENCH_PROFILE=1 node dist/scripts/bench/run.js

# The console's read endpoints (p50/p99 at 10 readers, ingest running) and a one-day export, on
# 2M stored events, SQLite and PostgreSQL. About 10 minutes. Options: see scripts/bench/read.ts.
bench-read: build
	node dist/scripts/bench/read.js

# GET /statistics/daily (30 days x 8 statistics; all 1,000 workers, a page of 100, the organization) on a
# filled store, SQLite and PostgreSQL: p50/max against 200 ms. A few minutes. BENCH_PROFILE=1 profiles the server.
bench-daily: build
	node dist/scripts/bench/daily-read.js

# The CPU the rollups spend summing 60,000 of make bench's events (8 statistics) into cells, as every
# process does for the batches it commits, alone and between other work as in the service; then what a
# drain of 30,000 to 90,000 events costs the HTTP thread and SQLite's writer for the cells they make.
# Under a minute.
bench-summing: build
	node dist/scripts/bench/summing.js

# The HTTP thread's own steps of an ingest request (parsing, judging, timestamps, ids, PostgreSQL's parameter,
# the reply), each timed alone on make bench's bodies, per 1,000 events. Seconds.
bench-steps: build
	node dist/scripts/bench/steps.js

# The web console's figures: first-page JavaScript gzipped, a 5,000-row day not loaded or rendered
# whole, the timeline's first row with demo data. Chromium and about a minute.
bench-web: build
	node --require tsx/cjs scripts/bench/web.ts

# 60 s of mixed valid and invalid requests; prints the server's RSS at 10 s and 60 s (not part of make test).
soak: build
	node dist/scripts/soak.js

clean:
	rm -rf dist

# The two commands of the README work on a fresh clone with only Node.js 20 and npm:
#   make demo   generates a sample ledger in demo/, opens it, prints counts, the outbox, the rate
#   make test   installs, builds, brings PostgreSQL's server where it can (scripts/pg-server.sh),
#               runs every test; the last line is "N passed, N failed"
# and the habits in one command, which CI runs (.ci/run):
#   make check  the type check (the build), the lint and format check, then every test
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

NODE_MODULES := node_modules/.package-lock.json
CLI := node dist/lib/cli.js
DEMO := demo/honcho.jsonl

.PHONY: install build pg-server test check lint format demo bench charts clean

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: $(NODE_MODULES)

# The build is package.json's "build" script, written once (npm ci runs it too, as "prepare").
build: install
	npm run --silent build

# The PostgreSQL tests start a throwaway cluster from the server's binaries: as root, this
# installs them where they are missing; otherwise it says in one line what to install.
pg-server:
	@scripts/pg-server.sh

test: build pg-server
	node dist/test/run.js

# The build is the type check (tsc -p . under strict); then Biome checks, without writing, the
# lint, the formatting, sorted and unused imports (biome.jsonc). `make format` writes what Biome
# would have said. `make check` is that, then the README's test command, whose line
# "N passed, N failed" is the last.
lint: build
	npx --no-install biome ci .

check: lint
	$(MAKE) --no-print-directory test

format: install
	npx --no-install biome check --write .

demo: build
	@mkdir -p demo
	@rm -f $(DEMO)
	$(CLI) gen $(DEMO) --records 200000 --seed 7
	$(CLI) verify $(DEMO)
	$(CLI) counts $(DEMO)
	@echo "The first rows of the outbox:"
	@$(CLI) outbox $(DEMO) | head -n 5

# The benchmarks write their results files (bench/*.json) and the docs' generated sections; the
# charts in docs/charts/ are drawn from those files last. `make charts` draws them again from the
# results files in the checkout, without measuring.
bench: build
	node dist/bench/run.js
	node dist/bench/read-model.js
	node dist/bench/rebuild.js
	node dist/bench/charts.js

charts: build
	node dist/bench/charts.js

clean:
	rm -rf dist demo bench/data

# The crash and fuzz harnesses (test/crash, test/fuzz) at ten times their `make test` counts, and
# the conformance suites (test/conformance) and the read model's tests at their full workloads.
.PHONY: torture coverage
torture: build
	LEDGERSTORE_TORTURE=10 node dist/test/run.js crash/
	LEDGERSTORE_TORTURE=10 node dist/test/run.js fuzz/
	LEDGERSTORE_TORTURE=10 node dist/test/run.js conformance/
	LEDGERSTORE_TORTURE=10 node dist/test/run.js read-model

# Every test under c8, mapped back to the .ts sources (the build writes source maps); then the
# branch coverage of each backend and the branches of them that no test took.
coverage: build pg-server
	rm -rf coverage
	npx c8 --reporter=text --reporter=json-summary --reporter=json --include 'dist/backends/**' --include 'dist/lib/**' node dist/test/run.js
	node dist/test/support/coverage-report.js coverage

# The PostgreSQL backend's benchmark (bench/postgres.ts), on a throwaway cluster unless
# LEDGERSTORE_PG_URL names a server.
.PHONY: bench-postgres
bench-postgres: build pg-server
	node dist/bench/postgres.js

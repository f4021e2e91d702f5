# Makefile - the one, non-recursive build of pfisim.
#
#   make             build/pfisim and build/libpfisim.a
#   make run         install what is missing, build, run the default demonstration
#   make test        install what is missing, build, run every test
#   make check-asan  the same tests under AddressSanitizer and UBSan (build/asan/)
#   make fuzz        every reader under libFuzzer, FUZZ_SECONDS each (docs/reliability.md);
#                    make fuzz-ci: each briefly, as CI does
#   make bench       benchmark drivers (bench/); make bench-scale: the scaling runs;
#                    make bench-work: the cap-4k series in instructions (needs valgrind);
#                    make bench-tree: a year under a power tree against one node
#                    make bench-events: what one DR event costs each policy, in instructions
#   make study-oversub, make study-pricing, make study-deadlines   the sweeps of
#                    docs/results.md (minutes)
#   make study-source the source study reproduced (docs/results.md; under a minute)
#   make study-tree  oversubscribing rows under a power tree (docs/results.md; seconds)
#   make lint        clang-format check, cppcheck, the banned-function list, the layers
#   make layers      no file calls a higher layer (tests/tools/layers.sh; docs/simulator.md)
#   make format      apply clang-format
#   make install     PREFIX (default /usr/local) and DESTDIR honoured; make uninstall
#   make deps        apt-get the Debian packages the build and tests need
#
# V=1 prints full commands; WERROR=1 turns warnings into errors (CI sets it).
# Only the command line (sim/cli/) is outside the library: libpfisim.a never prints, exits or
# reads argv.

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
MANDIR  ?= $(PREFIX)/share/man
SHAREDIR ?= $(PREFIX)/share/pfisim
DESTDIR ?=

CC      ?= cc
BUILD   ?= build
PKGS    := gsl libconfig cairo sqlite3

# pkg-config is asked once, and only when a recipe needs the flags, so that `make deps`
# can install the packages first within the same make run.
PKG_CFLAGS = $(eval PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null))$(PKG_CFLAGS)
PKG_LIBS   = $(eval PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null))$(PKG_LIBS)

WARN    := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
           -Wdouble-promotion -Wfloat-equal -Wvla -Wpointer-arith -Wcast-qual
ifeq ($(WERROR),1)
WARN    += -Werror
endif
# -flto: the engine's calls into the heap, the queue index and the finish order inlined across
# files (13% off 120 days of the Poisson case on 10,000 GPUs, the same results); fat
# objects, so that the installed libpfisim.a links without LTO, or with another compiler.
OPT     ?= -O2 -g -flto=auto -ffat-lto-objects
# The link's whole-program pass warns of values "maybe used uninitialised" that a call sets
# on every path it takes (a parser's out-parameters: false alarms in nine files); each
# file's own compile still makes that check, the link does not repeat it.
LTO_LINK = $(if $(findstring -flto,$(OPT)),-Wno-maybe-uninitialized)
CFLAGS_ALL = -std=c11 $(OPT) $(WARN) -pthread -D_POSIX_C_SOURCE=200809L -MMD -MP \
             -Isim -I$(BUILD)/gen $(PKG_CFLAGS) $(CFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -lm -pthread $(LDLIBS)
# The executable links its dependencies' static archives, which Debian's -dev packages ship:
# it then starts in some 2.7 ms instead of 7.2, the 25 shared libraries of GSL, libconfig,
# SQLite and cairo's tree no longer mapped and relocated at every start (bench/startup.sh,
# docs/benchmarks.md "Start-up"), a cost every run, every test's command and every array
# task of a sweep pays. libc, libm and libpthread stay shared. LINK_DEPS=shared links the
# dependencies shared; where an archive is missing, the link falls back to that and says so.
LINK_DEPS ?= static
PKG_STATIC = $(eval PKG_STATIC := $(filter-out -lm -lpthread -pthread -ldl -lrt -lc,\
                 $(shell pkg-config --static --libs $(PKGS) 2>/dev/null)))$(PKG_STATIC)
BIN_LINK   = $(CC) $(CFLAGS_ALL) $(LTO_LINK) -Wl,--dynamic-list=sim/pfisim/policy.syms -o $@ \
             $(MAIN_OBJ) $(LIB)

ifeq ($(V),1)
Q :=
else
Q := @
endif

LIB_SRC  := $(sort $(wildcard sim/*.c) $(wildcard models/*.c) \
            $(wildcard traces/*.c) $(wildcard policies/*.c) $(wildcard plots/*.c))
GEN_SRC  := $(BUILD)/gen/gpus_embed.c
TEST_SRC := $(sort $(wildcard tests/*.c))
GPU_CFG  := $(sort $(wildcard configs/gpus/*.cfg))
ARR_CFG  := $(sort $(wildcard configs/arrivals/*.cfg))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/gpus_embed.o
MAIN_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(sort $(wildcard sim/cli/*.c)))
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

LIB      := $(BUILD)/libpfisim.a
BIN      := $(BUILD)/pfisim
TESTBIN  := $(BUILD)/pfisim-tests
# Policy plugins (docs/policies.md): the example, and the broken ones the tests load.
PLUGINS  := $(BUILD)/plugins/equal-plugin.so \
            $(patsubst tests/plugins/%.c,$(BUILD)/plugins/test-%.so,$(wildcard tests/plugins/*.c))

.PHONY: all plugins run test check check-asan bench bench-scale bench-work bench-events bench-tree lint layers format install uninstall clean deps \
        study-oversub study-pricing study-deadlines study-source study-tree fuzz fuzz-ci fuzz-build
.DEFAULT_GOAL := all

all: $(BIN) $(LIB) $(PLUGINS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

# The GPU profiles (configs/gpus/) and the fitted arrival models (configs/arrivals/) are the
# source of truth; they are embedded into the library so that the binary needs no
# install-time path to find them.
$(GEN_SRC): $(GPU_CFG) $(ARR_CFG) Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  EMBED   configs/gpus configs/arrivals")
	$(Q){ echo '/* generated from configs/gpus and configs/arrivals by the Makefile; do not edit */'; \
	  echo '#include "internal.h"'; \
	  for table in gpu:"$(GPU_CFG)" arrivals:"$(ARR_CFG)"; do \
	    echo "const struct pfs__embedded_file pfs__$${table%%:*}_embedded[] = {"; \
	    for f in $${table#*:}; do \
	      n=$$(basename $$f .cfg); echo "    {\"$$n\","; \
	      sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/        "/' -e 's/$$/\\n"/' $$f; \
	      echo '    },'; \
	    done; \
	    echo '    {0, 0}'; echo '};'; \
	  done; } > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/gpus_embed.o: $(GEN_SRC)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -Isim -c $< -o $@

$(LIB): $(LIB_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# The executable exports the policy ABI's helpers to the plugins it loads (sim/pfisim/policy.syms).
$(BIN): $(MAIN_OBJ) $(LIB) sim/pfisim/policy.syms
	@$(if $(Q),echo "  LD      $@")
ifeq ($(LINK_DEPS),static)
	$(Q)$(BIN_LINK) -Wl,-Bstatic $(PKG_STATIC) -Wl,-Bdynamic -lm -pthread $(LDLIBS) 2>/dev/null || \
	    { echo "  (a dependency has no static archive here: $@ links them shared)"; \
	      $(BIN_LINK) $(LDLIBS_ALL); }
else
	$(Q)$(BIN_LINK) $(LDLIBS_ALL)
endif

# Each plugin is built as a plugin author builds one: -shared -fPIC against sim/pfisim/policy.h,
# nothing linked.
plugins: $(PLUGINS)

$(BUILD)/plugins/equal-plugin.so: policies/examples/equal_plugin.c sim/pfisim/policy.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  PLUGIN  $@")
	$(Q)$(CC) $(filter-out -MMD -MP,$(CFLAGS_ALL)) -shared -fPIC -o $@ $<

# (test-constructor.so is the shipped example with a constructor added: it includes it)
$(BUILD)/plugins/test-%.so: tests/plugins/%.c sim/pfisim/policy.h policies/examples/equal_plugin.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  PLUGIN  $@")
	$(Q)$(CC) $(filter-out -MMD -MP,$(CFLAGS_ALL)) -shared -fPIC -o $@ $<

$(TESTBIN): $(TEST_OBJ) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) $(LTO_LINK) -o $@ $^ $(LDLIBS_ALL)

# `make run` and `make test` first install what is missing, then build in a second make
# so that the pkg-config flags are read after the install.
run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh configs/run-default.sh $(BIN)

# The two studies of docs/results.md, one command each (their sweep files are in
# configs/sweeps/; the databases and figures go to results/).
study-oversub: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(BIN) sweep configs/sweeps/oversub.cfg -j $$(nproc) --resume --db results/oversub.db
	$(Q)$(BIN) plot results/oversub.db -o results/plots --only oversub

study-pricing: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(BIN) sweep configs/sweeps/pricing.cfg -j $$(nproc) --resume --db results/pricing.db
	$(Q)$(BIN) price results/pricing.db
	$(Q)$(BIN) plot results/pricing.db -o results/plots --only pricing

study-deadlines: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(BIN) sweep configs/sweeps/deadlines.cfg -j $$(nproc) --resume --db results/deadlines.db
	$(Q)$(BIN) plot results/deadlines.db -o results/plots --only deadlines

# The source study (docs/results.md, "The source study, reproduced"): no sweep file, one
# command; results/study-source.csv and results/plots/study-source.png, the same bytes
# every time.
study-source: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(BIN) study source -o results

# The power tree's oversubscription study (docs/results.md, "Oversubscribing rows"; under a
# minute): results/study-tree.csv, the same bytes every time.
study-tree: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(BIN) study tree -o results

test: deps
	$(Q)$(MAKE) --no-print-directory $(TESTBIN) $(BIN) plugins $(BUILD)/fnv-collide
	$(Q)PFISIM_BIN=$(BIN) $(TESTBIN)

check: test

# Same tests, separate build tree, sanitizers on. Leaks are errors (LeakSanitizer). The
# dependencies linked shared, so that tests/lsan.supp finds fontconfig's by its library.
check-asan: deps
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan LINK_DEPS=shared \
	    OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    build/asan/pfisim-tests build/asan/pfisim plugins
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	    LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	    PFISIM_BIN=build/asan/pfisim build/asan/pfisim-tests

# Fuzzing (docs/reliability.md): one libFuzzer binary per reader (tests/fuzz/fuzz.c), the
# library built by clang with ASan and UBSan in build/fuzz/. tests/fuzz/run.sh makes each
# harness's seed corpus from the project's own files and reports the executions.
FUZZ_TARGETS := csv curves jobs workload trace nvidia_smi dcgm perseus zeus emerald grid gpu \
                scenario sweep predictor json exec_answer results_db
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1
FUZZ_CC      ?= clang
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

$(BUILD)/fuzz-%: tests/fuzz/fuzz.c sim/internal.h sim/pfisim.h $(LIB)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CC) $(filter-out -MMD -MP,$(CFLAGS_ALL)) -fsanitize=fuzzer -DFUZZ_TARGET=$* -o $@ $< \
	    $(LIB) $(LDLIBS_ALL)

fuzz-build: deps
	$(Q)command -v $(FUZZ_CC) >/dev/null || { echo "fuzz: $(FUZZ_CC) not found (apt-get install clang)"; exit 1; }
	$(Q)$(MAKE) --no-print-directory BUILD=build/fuzz CC=$(FUZZ_CC) CFLAGS=-Wno-double-promotion \
	    OPT="-O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN)" build/fuzz/libpfisim.a \
	    $(FUZZ_TARGETS:%=build/fuzz/fuzz-%)

fuzz: fuzz-build
	$(Q)FUZZ_JOBS=$(FUZZ_JOBS) sh tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-ci: fuzz-build
	$(Q)FUZZ_JOBS=$$(nproc) sh tests/fuzz/run.sh 4 $(FUZZ_TARGETS)

# What found test_sweep_hash_collision's pair (run by hand, minutes): built with the tests
# so that it keeps compiling.
$(BUILD)/fnv-collide: $(BUILD)/tests/tools/fnv_collide.o
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $^ -pthread

$(BUILD)/bench_model: $(BUILD)/bench/bench_model.o $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) $(LTO_LINK) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/bench_alloc: $(BUILD)/bench/bench_alloc.o $(LIB) sim/pfisim/policy.syms
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) $(LTO_LINK) -Wl,--dynamic-list=sim/pfisim/policy.syms -o $@ \
	    $(BUILD)/bench/bench_alloc.o $(LIB) $(LDLIBS_ALL)

bench: deps
	$(Q)$(MAKE) --no-print-directory all plugins $(BUILD)/bench_model $(BUILD)/bench_alloc
	$(Q)sh bench/run.sh

# Issue 16's scaling benchmark (minutes; docs/benchmarks.md).
bench-scale: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh bench/scale.sh

# Issue 58's bar: a year of a 10,000-GPU hall under its power tree against the same hall as
# one node (about four minutes on two cores; docs/benchmarks.md).
bench-tree: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh bench/tree.sh

# The cap-4k series counted in instructions (callgrind: about 10 minutes; docs/benchmarks.md).
bench-work: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh bench/work.sh

# What one DR event costs each policy, in instructions (callgrind: about 2 minutes).
bench-events: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh bench/event-cost.sh

DEB_PKGS := libgsl-dev libconfig-dev libcairo2-dev libsqlite3-dev pkg-config fonts-dejavu-core
deps:
	$(Q)missing=""; \
	pkg-config --version >/dev/null 2>&1 || missing="pkg-config"; \
	for p in gsl libconfig cairo sqlite3; do \
	  pkg-config --exists $$p 2>/dev/null || missing="$$missing $$p"; done; \
	[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing="$$missing fonts"; \
	command -v cc >/dev/null 2>&1 || missing="$$missing cc"; \
	if [ -n "$$missing" ]; then \
	  echo "deps: missing:$$missing"; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "deps: apt-get install $(DEB_PKGS) gcc make"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEB_PKGS) gcc make >/dev/null || \
	    { echo "deps: apt-get failed; run it yourself and retry"; exit 1; }; \
	  else \
	    echo "deps: not root; run: sudo apt-get install $(DEB_PKGS) gcc make"; exit 1; \
	  fi; \
	fi

LINT_SRC = $(wildcard sim/*.[ch] sim/pfisim/*.h sim/cli/*.[ch] models/*.[ch] traces/*.[ch] \
           policies/*.[ch] policies/examples/*.c plots/*.[ch] tests/*.[ch] tests/fuzz/*.[ch] \
           tests/plugins/*.c tests/tools/*.c bench/*.[ch])
BANNED   := \b(atoi|atof|atol|sprintf|vsprintf|strcpy|strcat|strtok|gets)[[:space:]]*\(

# The layers (docs/simulator.md, "Layers"): no file calls a higher layer's function, read from
# the objects the build made. In .ci/run as well as in lint.
layers: $(LIB) $(BIN)
	$(Q)sh tests/tools/layers.sh $(BUILD)

lint: layers
	$(Q)command -v clang-format >/dev/null || { echo "lint: clang-format not found"; exit 1; }
	$(Q)command -v cppcheck >/dev/null || { echo "lint: cppcheck not found"; exit 1; }
	$(Q)clang-format --dry-run -Werror $(LINT_SRC)
	$(Q)if grep -nE '$(BANNED)' $(LINT_SRC); then echo "lint: banned function (STYLE.md)"; exit 1; fi
	$(Q)cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability,performance \
	    --inline-suppr --suppress=missingIncludeSystem -Isim $(LINT_SRC)
	@echo "lint: ok"

format:
	$(Q)clang-format -i $(LINT_SRC)

# The shipped files go to SHAREDIR ($(PREFIX)/share/pfisim), where the binary finds them from
# its own path (BIN/../share/pfisim, so an install can be moved): the synthetic corpus with its
# predictor, and the scenarios and sweeps of configs/ (docs/scenarios.md).
SHARE_FILES := traces/h200-h100/curves.csv traces/h200-h100/jobs.csv \
               traces/h200-h100/predictor.cfg traces/h200-h100/README.md \
               policies/examples/equal_plugin.c policies/examples/equal.py \
               $(wildcard configs/*.cfg configs/*.csv configs/sweeps/*.cfg)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/pfisim
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libpfisim.a
	install -m 644 sim/pfisim.h $(DESTDIR)$(INCDIR)/pfisim.h
	install -d $(DESTDIR)$(INCDIR)/pfisim
	install -m 644 sim/pfisim/policy.h $(DESTDIR)$(INCDIR)/pfisim/policy.h
	install -m 644 sim/pfisim/studies.h $(DESTDIR)$(INCDIR)/pfisim/studies.h
	install -m 644 docs/pfisim.1 $(DESTDIR)$(MANDIR)/man1/pfisim.1
	for f in $(SHARE_FILES); do \
	  install -d $(DESTDIR)$(SHAREDIR)/$$(dirname $$f) && \
	  install -m 644 $$f $(DESTDIR)$(SHAREDIR)/$$f || exit 1; done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/pfisim $(DESTDIR)$(LIBDIR)/libpfisim.a \
	      $(DESTDIR)$(INCDIR)/pfisim.h $(DESTDIR)$(INCDIR)/pfisim/policy.h \
	      $(DESTDIR)$(INCDIR)/pfisim/studies.h \
	      $(DESTDIR)$(MANDIR)/man1/pfisim.1
	-rmdir $(DESTDIR)$(INCDIR)/pfisim 2>/dev/null
	rm -rf $(DESTDIR)$(SHAREDIR)

clean:
	rm -rf build results

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

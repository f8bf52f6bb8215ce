# tcjoin: host C11 + CUDA kernels. `make`, `make demo`, `make test`,
# `make install PREFIX=... DESTDIR=...`, `make fmt`, `make bench`,
# `make SM=90` for one architecture (SM=90a: the Hopper path alone).
PREFIX  ?= /usr/local
comma   := ,
NPROC   := $(shell nproc 2>/dev/null || echo 2)
BUILD   ?= build
SM      ?= 80 86 89 90
CC      ?= cc
CXX     ?= g++
NVCC    ?= $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard /usr/local/cuda/bin/nvcc))
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))

HDF5_CFLAGS := $(shell pkg-config --cflags hdf5 2>/dev/null || echo -I/usr/include/hdf5/serial)
HDF5_LIBS   := $(shell pkg-config --libs hdf5 2>/dev/null || echo -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5)

WARN    := -Wall -Wextra -Wno-unused-parameter
CFLAGS  ?= -O2 -g
# -fPIC: the same objects make the program and libtcjoin.so (the library
# the Python module loads), so there is one build of each file.
CFLAGS  += -fPIC -std=c11 -D_GNU_SOURCE $(WARN) -MMD -MP -pthread -Iinclude -Isrc -Isrc/cluster -Isrc/cli -Istore -Iui -Ikernels $(HDF5_CFLAGS)
LDLIBS  := -lreadline -lpanelw -lncursesw -lsqlite3 $(HDF5_LIBS) -lm -ldl -lpthread

ifneq ($(SAN),)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

# kernels/*.c are the plain-C parts of kernels/ (switch table, kernel
# choice): host code, built with or without CUDA. stub.c stands in for the
# .cu files when there is no nvcc. CUPTI's profiler needs only headers at
# build time (libcupti is dlopen'ed); without them the counters are N/A
# (src/cupti_none.c).
CUPTI_H  := $(wildcard $(CUDA_HOME)/include/cupti_profiler_host.h)
HOST_SRC := $(filter-out src/cli/main.c src/cupti_none.c kernels/stub.c src/cli/mpi_%.c,$(wildcard src/*.c src/cluster/*.c src/cli/*.c store/*.c ui/*.c kernels/*.c))
HOST_SRC += $(if $(CUPTI_H),,src/cupti_none.c)
HOST_OBJ := $(HOST_SRC:%.c=$(BUILD)/obj/%.o)
CXX_SRC  := $(if $(CUPTI_H),$(wildcard src/*.cpp))
CXX_OBJ  := $(CXX_SRC:%.cpp=$(BUILD)/obj/%.o)

# CPU_ONLY=1: the host program with kernels/stub.c, even where nvcc is
# installed (make demo on a machine without a GPU: seconds, not minutes).
ifeq ($(CPU_ONLY),)
ifneq ($(NVCC),)
CU_SRC   := $(wildcard kernels/*.cu kernels/ladder/*.cu)
# Kernel objects carry no host sanitizer: a sanitized build reuses the
# plain build's kernel objects (KOBJ_BUILD) so CUDA is compiled once.
KOBJ_BUILD ?= $(BUILD)
KERN_OBJ := $(CU_SRC:%.cu=$(KOBJ_BUILD)/obj/%.o)
GENCODE  := $(foreach a,$(SM),$(if $(filter 90,$(a)),-gencode arch=compute_90a$(comma)code=sm_90a -gencode arch=compute_90$(comma)code=sm_90,-gencode arch=compute_$(a)$(comma)code=sm_$(a)))
# The kernel objects record the SM list they were compiled for: another
# list rebuilds them rather than linking code for the wrong architectures.
SM_STAMP := $(KOBJ_BUILD)/obj/kernels/sm-list
NVFLAGS  ?= -O3 -std=c++17 -lineinfo -Xcompiler -Wall,-fPIC -Ikernels $(GENCODE) -MMD -MP
# The teaching ladder (kernels/ladder/) as sm_80 and sm_90 SASS only: sm_80
# code runs on 8.6 and 8.9, and no rung needs sm_90a (build time); SM=90a
# alone builds it as sm_90a.
LADDER_SM := $(or $(sort $(if $(filter 80 86 89,$(SM)),80) $(filter 90,$(SM))),$(SM))
$(KOBJ_BUILD)/obj/kernels/ladder/%.o: GENCODE = $(foreach a,$(LADDER_SM),-gencode arch=compute_$(a)$(comma)code=sm_$(a))
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -lcudart_static -lrt -lstdc++
CFLAGS   += -DTCJ_CUDA
else
KERN_OBJ := $(BUILD)/obj/kernels/stub.o
CUDA_LIBS := -lstdc++
STUB_WHY := 0
$(info note: nvcc not found: building without CUDA; GPU engines will report that no device is present)
endif
else
KERN_OBJ := $(BUILD)/obj/kernels/stub.o
CUDA_LIBS := -lstdc++
# Why this build has no CUDA, for the GPU engines' one line (kernels/stub.c):
# make demo passes CPU_ONLY=nodriver when no NVIDIA driver is loaded.
STUB_WHY := $(if $(filter nodriver,$(CPU_ONLY)),2,1)
endif
$(BUILD)/obj/kernels/stub.o: CFLAGS += -DTCJ_STUB_WHY=$(STUB_WHY)

TEST_SRC := $(wildcard tests/unit/t_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
GPUT_SRC := $(wildcard tests/gpu/g_*.c)
GPUT_BIN := $(GPUT_SRC:tests/gpu/%.c=$(BUILD)/tests/%)
# The fault scripts' second program on a session log (tests/faults/).
FAULT_SRC := $(wildcard tests/faults/f_*.c)
FAULT_BIN := $(FAULT_SRC:tests/faults/%.c=$(BUILD)/tests/%)
LIB := $(BUILD)/libtcjoin.a

# Tables generated at build time for `explain`, `ablate` and `profile
# table6` (src/teach_gen.h): the measured tables of docs/BENCHMARKS.md, the
# kernel lines tagged with a switch name, the SASS counts of each variant.
GEN      := $(BUILD)/gen
GEN_OBJ  := $(GEN)/bench_tables.o $(GEN)/kernel_tags.o $(GEN)/sass_counts.o $(GEN)/ladder_src.o

all: $(BUILD)/tcjoin $(BUILD)/libtcjoin.so $(BUILD)/tcjoin.pc

$(BUILD)/tcjoin: $(BUILD)/obj/src/cli/main.o $(LIB)
	@rm -f $@
	$(CC) $(LDFLAGS) -o $@ $(filter-out FORCE,$^) $(CUDA_LIBS) $(LDLIBS)

# libtcjoin.so: include/tcjoin.h's calls (src/cli/api*.c) and what they
# reach in the same archive the program links (one build, one
# implementation); only the tcj_ names are exported (src/cli/api.map).
API_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard src/cli/api*.c))
SOVER   := 1
$(BUILD)/libtcjoin.so: $(API_OBJ) $(LIB) src/cli/api.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libtcjoin.so.$(SOVER) -Wl,--version-script=src/cli/api.map \
		-Wl,--no-undefined -Wl,--as-needed -o $@.$(SOVER) $(API_OBJ) $(LIB) $(CUDA_LIBS) $(LDLIBS)
	ln -sfn libtcjoin.so.$(SOVER) $@

$(BUILD)/tcjoin.pc: Makefile
	@mkdir -p $(dir $@)
	printf 'prefix=%s\nincludedir=$${prefix}/include\nlibdir=$${prefix}/lib\n\nName: tcjoin\nDescription: epsilon-joins, k-distances and clusterings on tensor cores\nVersion: %s\nCflags: -I$${includedir}\nLibs: -L$${libdir} -ltcjoin\n' \
		'$(PREFIX)' "$$(sed -n 's/^#define TCJ_VERSION "\([^"]*\)".*/\1/p' src/cli/version.h)" >$@

# ---- MPI: build/tcjoin-mpi where mpicc is (Open MPI or MPICH; MPI-3
# calls only). src/cli/mpi_*.c go into it alone, with main.c as tcjoin_main
# (rank 0's program); the plain tcjoin never needs MPI. ----
MPICC   ?= $(firstword $(shell command -v mpicc 2>/dev/null))
ifneq ($(MPICC),)
MPI_OBJ := $(patsubst %.c,$(BUILD)/obj-mpi/%.o,$(wildcard src/cli/mpi_*.c) src/cli/main.c)
all: $(BUILD)/tcjoin-mpi
tests: $(BUILD)/tcjoin-mpi

$(BUILD)/obj-mpi/%.o: %.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj-mpi/src/cli/main.o: CFLAGS += -Dmain=tcjoin_main

$(BUILD)/tcjoin-mpi: $(MPI_OBJ) $(LIB)
	$(MPICC) $(LDFLAGS) -o $@ $(filter-out FORCE,$^) $(CUDA_LIBS) $(LDLIBS)
endif
# ---- end MPI ----

$(LIB): $(HOST_OBJ) $(CXX_OBJ) $(KERN_OBJ) $(GEN_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) -O2 -g -fPIC -std=c++17 $(WARN) -MMD -MP -Isrc -Ikernels -I$(CUDA_HOME)/include $(if $(SAN),-fsanitize=address$(comma)undefined) -c -o $@ $<

$(GEN)/bench_tables.c: docs/BENCHMARKS.md scripts/gen_bench_tables.sh
	@mkdir -p $(dir $@)
	sh scripts/gen_bench_tables.sh teach_bench_doc $< >$@.tmp && mv $@.tmp $@

$(GEN)/kernel_tags.c: scripts/gen_kernel_tags.sh $(wildcard kernels/*.cu kernels/*.cuh kernels/*.h)
	@mkdir -p $(dir $@)
	sh scripts/gen_kernel_tags.sh teach_tags kernels >$@.tmp && mv $@.tmp $@

# The ladder's rung files and the files its last rungs name (kernels.h,
# kern_ladder_rungs), embedded for `ladder source|diff|why`, and
# docs/TEACHING.md for its stored ladders (`ladder stored`).
LADDER_SRC := $(sort $(wildcard kernels/ladder/r*.cu)) kernels/fasted_wgmma.cuh \
              kernels/fmt_fp16.cu kernels/fmt_fp8.cu kernels/fmt_int8.cu docs/TEACHING.md
$(GEN)/ladder_src.c: scripts/gen_ladder_src.sh $(LADDER_SRC)
	@mkdir -p $(dir $@)
	sh scripts/gen_ladder_src.sh $(LADDER_SRC) >$@.tmp && mv $@.tmp $@

$(GEN)/sass_counts.c: scripts/gen_sass_counts.sh $(KERN_OBJ)
	@mkdir -p $(dir $@)
	CUDA_HOME=$(CUDA_HOME) sh scripts/gen_sass_counts.sh teach_sass_counts $(filter %.o,$^) >$@.tmp && mv $@.tmp $@

# The tensor-core formats' engine rows, derived from their one table
# (src/format_table.c) by scripts/gen_formats.c and included by
# src/engine_table.c (C cannot copy one constant's fields into another).
FMT_GEN_SRC := scripts/gen_formats.c src/format_table.c src/fp16.c src/fmt_round.c src/fmt8.c
$(GEN)/gen_formats: $(FMT_GEN_SRC) src/format.h src/fmt8.h src/fmt_round.h src/fp16.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -Isrc -o $@ $(FMT_GEN_SRC) -lm

$(GEN)/format_engines.inc: $(GEN)/gen_formats
	$< >$@.tmp && mv $@.tmp $@

$(BUILD)/obj/src/engine_table.o: $(GEN)/format_engines.inc
$(BUILD)/obj/src/engine_table.o: CFLAGS += -I$(GEN)

# docs/ENGINES.md's recipe row, compiled by tests/unit/t_format_table.c
# (the code block between the recipe-row markers, fences dropped).
$(GEN)/recipe_row.inc: docs/ENGINES.md
	@mkdir -p $(dir $@)
	sed -n '/^<!-- recipe-row/,/^<!-- \/recipe-row -->/p' $< | grep -v '^<!--\|^```' >$@.tmp && mv $@.tmp $@
$(BUILD)/tests/t_format_table: $(GEN)/recipe_row.inc
$(BUILD)/tests/t_format_table: CFLAGS += -I$(GEN)

# Fixtures of the generators for tests/unit/t_teach.c.
$(GEN)/fixture_%.c: scripts/gen_kernel_tags.sh scripts/gen_sass_counts.sh scripts/gen_bench_tables.sh $(wildcard tests/fixtures/*/*)
	@mkdir -p $(dir $@)
	case $* in \
	tags) sh scripts/gen_kernel_tags.sh fixture_tags tests/fixtures/kernel_tags ;; \
	notags) sh scripts/gen_kernel_tags.sh fixture_notags tests/fixtures/kernel_notags ;; \
	sass_tmpl) sh scripts/gen_sass_counts.sh fixture_sass_tmpl --dump tests/fixtures/sass/template.sass ;; \
	sass_cfg) sh scripts/gen_sass_counts.sh fixture_sass_cfg --dump tests/fixtures/sass/cfg.sass ;; \
	bench) sh scripts/gen_bench_tables.sh fixture_bench tests/fixtures/bench/BENCH.md ;; \
	esac >$@.tmp && mv $@.tmp $@

TEACH_FIX := $(foreach f,tags notags sass_tmpl sass_cfg bench,$(GEN)/fixture_$(f).c)
$(BUILD)/tests/t_teach: $(TEACH_FIX)
$(BUILD)/tests/t_teach: CFLAGS += -I$(GEN)

$(GEN)/%.o: $(GEN)/%.c src/teach_gen.h
	$(CC) $(CFLAGS) -c -o $@ $<

ifeq ($(KOBJ_BUILD),$(BUILD))
$(BUILD)/obj/kernels/%.o: kernels/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c -o $@ $<

ifneq ($(CU_SRC),)
$(KERN_OBJ): $(SM_STAMP)
ifneq ($(strip $(SM)),$(shell cat $(SM_STAMP) 2>/dev/null))
$(SM_STAMP): FORCE
endif
$(SM_STAMP):
	@mkdir -p $(dir $@)
	echo '$(strip $(SM))' >$@
endif
endif

# make demo links $(BUILD)/tcjoin and tcjoin-mpi to the CPU-only build.
# Every target is secondary (.SECONDARY below), so make would take such a
# link, newer than every source, for the program itself: rebuild over it.
$(shell for f in $(BUILD)/tcjoin $(BUILD)/tcjoin-mpi; do [ -L $$f ] && echo $$f; done): FORCE

$(BUILD)/tests/%: tests/unit/%.c tests/unit/check.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< tests/unit/check.c $(LIB) $(CUDA_LIBS) $(LDLIBS)

$(BUILD)/tests/g_%: tests/gpu/g_%.c tests/unit/check.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< tests/unit/check.c $(LIB) $(CUDA_LIBS) $(LDLIBS)

$(BUILD)/tests/f_%: tests/faults/f_%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -lsqlite3

tests: $(BUILD)/tcjoin $(BUILD)/libtcjoin.so $(TEST_BIN) $(GPUT_BIN) $(FAULT_BIN)

# What tests/run.sh runs again under the sanitizers: tcjoin, libtcjoin
# (docs/PYTHON.md's C example) and the unit
# tests, with the small second programs some unit tests start beside them
# (tests/faults/f_*.c: t_store's lock holder); the GPU and MPI programs run
# from the plain build only.
tests-san: $(BUILD)/tcjoin $(BUILD)/libtcjoin.so $(TEST_BIN) $(FAULT_BIN)

# The CPU benchmark's driver (peak, form and kernel GFLOPS; scripts/bench_cpu.sh).
$(BUILD)/bench/bench_cpu: scripts/bench_cpu.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(CUDA_LIBS) $(LDLIBS)

bench-cpu-build: $(BUILD)/tcjoin $(BUILD)/bench/bench_cpu

deps:
	@sh scripts/deps.sh

# A GPU here? Cheap checks of the driver's files, no CUDA context.
HAVE_GPU := $(shell test -e /proc/driver/nvidia/version -o -e /dev/nvidia0 -o -e /dev/dxg && echo 1)

# make test without a GPU runs no kernel, so it compiles them as a check
# only: for one architecture, sm_90a (the Hopper path, the most code), or
# for the list the kernel objects already hold; SM=... chooses. docs/TESTING.md
# has the times.
ifeq ($(HAVE_GPU)$(filter-out file,$(origin SM)),)
TEST_SM = $(or $(shell cat $(BUILD)/obj/kernels/sm-list 2>/dev/null),90a)
TEST_NOTE = $(if $(NVCC),$(if $(CPU_ONLY),,no NVIDIA GPU here: the kernels are compiled for SM=$(TEST_SM) only, as a check; 'make' builds every architecture))
else
TEST_SM = $(SM)
endif

# Without a GPU the CUDA kernels (minutes to compile) could not run anyway:
# build the CPU-only program in $(BUILD)-cpu and say how to get the rest.
demo: deps
ifneq ($(HAVE_GPU),)
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@sh scripts/demo.sh $(BUILD)/tcjoin
else
	@echo "demo: no NVIDIA GPU here (no driver loaded): building the CPU-only program in $(BUILD)-cpu"
	@$(MAKE) --no-print-directory -j$(NPROC) BUILD=$(BUILD)-cpu CPU_ONLY=nodriver all
	@$(MAKE) --no-print-directory demo-links
	@echo "demo: on a machine with an NVIDIA GPU, 'make' builds the GPU code for every"
	@echo "demo: architecture (several minutes); 'make SM=90' builds one (see README)"
	@sh scripts/demo.sh $(BUILD)-cpu/tcjoin
endif

# The README says build/tcjoin and build/tcjoin-mpi: point them at the
# CPU-only build unless a real build is there. A later make replaces the
# links with the real programs (their FORCE rule), never what they point to.
demo-links:
	@for f in tcjoin tcjoin-mpi; do \
		[ -e $(BUILD)-cpu/$$f ] || continue; \
		if [ ! -e $(BUILD)/$$f ] || [ -L $(BUILD)/$$f ]; then \
			mkdir -p $(BUILD) && ln -sfn $(abspath $(BUILD)-cpu)/$$f $(BUILD)/$$f && \
			echo "demo: $(BUILD)/$$f is a link to $(BUILD)-cpu/$$f (the CPU-only build)"; fi; \
	done

# The suite, then the host code once more under ASan and UBSan (the CUDA
# objects are shared with the plain build).
test: deps
	@$(if $(TEST_NOTE),echo "test: $(TEST_NOTE)")
	@$(MAKE) --no-print-directory -j$(NPROC) SM="$(TEST_SM)" tests
	@$(MAKE) --no-print-directory -j$(NPROC) BUILD=build-san SAN=1 KOBJ_BUILD=$(BUILD) SM="$(TEST_SM)" tests-san
	@sh tests/run.sh $(BUILD) build-san

bench: all
	@sh scripts/bench.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/tcjoin $(DESTDIR)$(PREFIX)/bin/tcjoin
	if [ -x $(BUILD)/tcjoin-mpi ]; then install -m 755 $(BUILD)/tcjoin-mpi $(DESTDIR)$(PREFIX)/bin/tcjoin-mpi; fi
	install -m 644 man/tcjoin.1 $(DESTDIR)$(PREFIX)/share/man/man1/tcjoin.1
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/tcjoin.h $(DESTDIR)$(PREFIX)/include/tcjoin.h
	install -m 755 $(BUILD)/libtcjoin.so.$(SOVER) $(DESTDIR)$(PREFIX)/lib/libtcjoin.so.$(SOVER)
	ln -sfn libtcjoin.so.$(SOVER) $(DESTDIR)$(PREFIX)/lib/libtcjoin.so
	install -m 644 $(BUILD)/tcjoin.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/tcjoin.pc
	if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

# libFuzzer harnesses, one per loader and one for the script language
# (tests/fuzz/): clang, ASan and UBSan, the loaders, the generators (gen's
# words are read against their table) and the command parser only (no
# CUDA, no session log). `make fuzz` runs each for FUZZ_TIME
# seconds on a scratch copy of its corpus (tests/fuzz/corpus/NAME);
# findings land in $(FUZZ_BUILD)/crash-NAME-*. `make test` runs them briefly.
FUZZ_CC    ?= clang
FUZZ_BUILD ?= build-fuzz
FUZZ_TIME  ?= 60
FUZZ_CFLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -fno-omit-frame-pointer -pthread \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
	-Isrc -Isrc/cluster -Isrc/cli -Istore -Iui -Ikernels -Itests/fuzz $(HDF5_CFLAGS) -MMD -MP
FUZZ_SRC   := src/err.c src/mem.c src/par.c src/esc.c src/dataset.c src/dtype.c src/fp16.c src/cli/cmd.c src/dist.c $(wildcard src/load_*.c) tests/fuzz/util.c \
	$(wildcard src/gen*.c) \
	tests/fuzz/stubs.c
FUZZ_OBJ   := $(FUZZ_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_BIN   := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(wildcard tests/fuzz/fuzz_*.c))

$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(HDF5_LIBS) -lm -lpthread

fuzz-build: $(FUZZ_BIN)

# exit 0 when $(FUZZ_CC) can build a libFuzzer binary (tests/run.sh skips otherwise)
fuzz-available:
	@printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' | \
		$(FUZZ_CC) -fsanitize=fuzzer -x c - -o /dev/null >/dev/null 2>&1

fuzz: fuzz-build
	@sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_TIME)

fmt:
	clang-format -i $(wildcard include/*.h kernels/*.c src/*.c src/*.h src/cluster/*.c src/cluster/*.h src/cli/*.c src/cli/*.h src/*.cpp store/*.c store/*.h ui/*.c ui/*.h kernels/*.h kernels/*.cu kernels/*.cuh tests/unit/*.c tests/unit/*.h tests/gpu/*.c)

clean:
	rm -rf build build-san build-cpu build-fuzz

.PHONY: all tests tests-san deps demo demo-links test bench bench-cpu-build install fmt clean fuzz fuzz-build fuzz-available FORCE
FORCE:
.SECONDARY:
-include $(shell find $(BUILD) $(if $(filter fuzz%,$(MAKECMDGOALS)),$(FUZZ_BUILD)) -name '*.d' 2>/dev/null)

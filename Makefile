# SPDX-License-Identifier: Apache-2.0
# kwitness — build, test, demo. `make V=1` shows the commands.
# Every generated file goes under build/. Release builds define NDEBUG (the
# emitter's key-order assertion); the sanitizer builds of the unit tests keep it.

CC        ?= gcc
CLANG     ?= clang
BPFTOOL   ?= bpftool
BUILD     := build
ARCH      := x86

ifeq ($(V),1)
Q :=
else
Q := @
endif

WARN      := -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
CSTD      := -std=c11 -D_GNU_SOURCE
INCLUDES  := -Iinclude -Iuser -I$(BUILD)
CFLAGS    ?= -O2 -g
CFLAGS    += $(CSTD) $(WARN) $(INCLUDES) -fstack-protector-strong -D_FORTIFY_SOURCE=2 -DNDEBUG
SANFLAGS  := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_CFLAGS := $(CSTD) $(WARN) $(INCLUDES) $(SANFLAGS)

LIBS_CORE := -ljansson -lcrypto
LIBS_BPF  := -lbpf -lelf -lz
LIBS_TPM  := -ltss2-esys -ltss2-mu -ltss2-tctildr -ltss2-rc

# The library: canonical JSON, digests, keys, records, policy (no libbpf).
LIB_SRC   := $(sort $(wildcard user/lib/*.c))
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB_A     := $(BUILD)/libkwitness.a
# The collector pipeline: ring buffer event -> reorder -> canonical entry ->
# decision log writer -> transcript hash -> seal (signed record).
COLL_SRC  := $(sort $(wildcard user/collector/*.c))
COLL_OBJ  := $(COLL_SRC:%.c=$(BUILD)/%.o)
COLL_A    := $(BUILD)/libkwitness-collector.a
# The kernel-facing library: loader, maps, events (libbpf + skeleton).
KBPF_SRC  := $(sort $(wildcard user/bpf/*.c))
KBPF_OBJ  := $(KBPF_SRC:%.c=$(BUILD)/%.o)
KBPF_A    := $(BUILD)/libkwitness-bpf.a
# TPM 2.0 attestation: quotes, enrollment, evidence, appraisal (tpm2-tss).
TPM_SRC   := $(sort $(wildcard user/tpm/*.c))
TPM_OBJ   := $(TPM_SRC:%.c=$(BUILD)/%.o)
TPM_A     := $(BUILD)/libkwitness-tpm.a
CLI_SRC   := $(sort $(wildcard user/cli/*.c))
CLI_OBJ   := $(CLI_SRC:%.c=$(BUILD)/%.o)
# The CLI's control-socket client, for benchmarks.
CLI_LIB_OBJ := $(BUILD)/user/cli/client.o
D_SRC     := $(sort $(wildcard user/kwitnessd/*.c))
D_OBJ     := $(D_SRC:%.c=$(BUILD)/%.o)

BPF_SRC   := bpf/kwitness.bpf.c
BPF_OBJ   := $(BUILD)/kwitness.bpf.o
SKEL      := $(BUILD)/kwitness.skel.h
VMLINUX   := $(BUILD)/vmlinux.h

# Unit tests: tests/unit/test_*.c, each linked with the library, under ASan+UBSan.
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/asan/tests/%)
ASAN_LIB_OBJ := $(COLL_SRC:%.c=$(BUILD)/asan/%.o) $(LIB_SRC:%.c=$(BUILD)/asan/%.o)
ASAN_TPM_OBJ := $(TPM_SRC:%.c=$(BUILD)/asan/%.o)
# Test helper programs (tests/helpers/*.c), plain builds.
HELP_SRC  := $(sort $(wildcard tests/helpers/*.c))
HELP_BIN  := $(HELP_SRC:tests/helpers/%.c=$(BUILD)/tests/%)
# Benchmarks: bench/bench_*.c, optimised.
BENCH_SRC := $(sort $(wildcard bench/bench_*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps check unit test-bins demo vmtest bench install clean
all: $(BUILD)/kwitness $(BUILD)/kwitnessd $(HELP_BIN)

deps:
	$(Q)scripts/deps.sh

$(BUILD)/%.o: %.c | $(SKEL)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/asan/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC-SAN  $<")
	$(Q)$(CC) $(SAN_CFLAGS) -MMD -MP -c $< -o $@

$(LIB_A): $(LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(COLL_A): $(COLL_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(KBPF_A): $(KBPF_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(TPM_A): $(TPM_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(VMLINUX):
	@mkdir -p $(BUILD)
	$(if $(Q),@echo "  BTF     $@")
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BPF_OBJ): $(BPF_SRC) $(wildcard bpf/*.h) $(wildcard include/kwitness/abi/*.h) $(VMLINUX)
	$(if $(Q),@echo "  BPF     $<")
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) $(INCLUDES) -Wall -Werror -c $< -o $@

$(SKEL): $(BPF_OBJ)
	$(if $(Q),@echo "  SKEL    $@")
	$(Q)$(BPFTOOL) gen skeleton $< name kwitness_bpf > $@.tmp && mv $@.tmp $@

# `kwitness probe`: one tiny program per hook class, in an object of its own.
PROBE_OBJ  := $(BUILD)/probe.bpf.o
PROBE_SKEL := $(BUILD)/probe.skel.h
$(PROBE_OBJ): bpf/probe.bpf.c $(VMLINUX)
	$(if $(Q),@echo "  BPF     $<")
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) $(INCLUDES) -Wall -Werror -c $< -o $@

$(PROBE_SKEL): $(PROBE_OBJ)
	$(if $(Q),@echo "  SKEL    $@")
	$(Q)$(BPFTOOL) gen skeleton $< name kwitness_probe_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/user/bpf/probe.o: $(PROBE_SKEL)

$(BUILD)/kwitness: $(CLI_OBJ) $(KBPF_A) $(COLL_A) $(TPM_A) $(LIB_A)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(KBPF_A) $(COLL_A) $(TPM_A) $(LIB_A) $(LIBS_BPF) $(LIBS_TPM) $(LIBS_CORE)

$(BUILD)/kwitnessd: $(D_OBJ) $(KBPF_A) $(COLL_A) $(TPM_A) $(LIB_A)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $(D_OBJ) $(KBPF_A) $(COLL_A) $(TPM_A) $(LIB_A) $(LIBS_BPF) $(LIBS_TPM) $(LIBS_CORE)

$(BUILD)/asan/tests/%: tests/unit/%.c $(ASAN_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  TEST    $@")
	$(Q)$(CC) $(SAN_CFLAGS) -o $@ $< $(ASAN_LIB_OBJ) -lcmocka $(LIBS_CORE)

# The TPM appraisal tests link the TPM library too.
$(BUILD)/asan/tests/test_tpm: tests/unit/test_tpm.c $(ASAN_TPM_OBJ) $(ASAN_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  TEST    $@")
	$(Q)$(CC) $(SAN_CFLAGS) -o $@ $< $(ASAN_TPM_OBJ) $(ASAN_LIB_OBJ) -lcmocka $(LIBS_TPM) $(LIBS_CORE)

$(BUILD)/tests/%: tests/helpers/%.c $(KBPF_A) $(COLL_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(KBPF_A) $(COLL_A) $(LIB_A) $(LIBS_BPF) $(LIBS_CORE)

# Benchmarks link the same library units as kwitnessd (and the CLI's client).
$(BUILD)/bench/%: bench/%.c $(CLI_LIB_OBJ) $(KBPF_A) $(COLL_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  BENCH   $@")
	$(Q)$(CC) $(CFLAGS) -O3 -o $@ $< $(CLI_LIB_OBJ) $(KBPF_A) $(COLL_A) $(LIB_A) $(LIBS_BPF) $(LIBS_CORE) -lpthread

# Every header stands alone: it compiles on its own, so it includes what it
# uses (BPF headers for the BPF target, the rest as C11).
HEADERS_OK := $(BUILD)/headers.ok
$(HEADERS_OK): $(wildcard bpf/*.bpf.h include/kwitness/*.h include/kwitness/abi/*.h user/*/*.h) $(SKEL) $(PROBE_SKEL)
	$(if $(Q),@echo "  HEADERS")
	$(Q)for h in bpf/*.bpf.h; do \
		printf '#include "%s"\n' "$${h#bpf/}" | $(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) \
			$(INCLUDES) -Ibpf -Wall -Werror -x c -c - -o /dev/null || { echo "  in $$h"; exit 1; }; \
	done
	$(Q)for h in include/kwitness/*.h include/kwitness/abi/*.h user/*/*.h; do \
		printf '#include "%s"\n' "$$h" | $(CC) $(CSTD) $(WARN) $(INCLUDES) -I. -x c -c - -o /dev/null \
			|| { echo "  in $$h"; exit 1; }; \
	done
	$(Q)touch $@

test-bins: all $(UNIT_BIN) $(BENCH_BIN) $(HEADERS_OK)

# The README's test command: installs what is missing, builds, runs every suite.
check:
	$(Q)scripts/deps.sh --if-missing
	$(Q)$(MAKE) --no-print-directory test-bins
	$(Q)tests/run.sh

unit: $(UNIT_BIN)
	$(Q)tests/run.sh unit

# The README's main-job command: a real sandbox session, a signed, verified record.
demo:
	$(Q)scripts/deps.sh --if-missing
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

vmtest:
	$(Q)scripts/deps.sh --if-missing
	$(Q)$(MAKE) --no-print-directory test-bins
	$(Q)scripts/vmtest.sh

bench: all $(BENCH_BIN)
	$(Q)bench/run.sh

PREFIX ?= /usr/local
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin
	install -m 0755 $(BUILD)/kwitness $(DESTDIR)$(PREFIX)/bin/kwitness
	install -m 0755 $(BUILD)/kwitnessd $(DESTDIR)$(PREFIX)/sbin/kwitnessd

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

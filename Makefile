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
LIBS_ESTATE := -lsqlite3
# libpq: dlopen()ed at the first PostgreSQL connection (user/estate/pq_lazy.c)
PQ_CFLAGS := $(shell pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql)

# The version both binaries print and every open entry records: `git
# describe` in a checkout, else a release tarball's VERSION file. version.h
# is rewritten only when the version changes (what includes it rebuilds).
KW_VERSION := $(shell if [ -e .git ]; then git describe --tags --always --dirty 2>/dev/null; \
	elif [ -f VERSION ]; then head -n1 VERSION; fi | tr -cd 'A-Za-z0-9._+~-')
KW_VERSION := $(or $(KW_VERSION),unknown)
VERSION_H := $(BUILD)/version.h
$(shell mkdir -p $(BUILD) && echo '#define KW_VERSION "$(KW_VERSION)"' | \
	cmp -s - $(VERSION_H) || echo '#define KW_VERSION "$(KW_VERSION)"' >$(VERSION_H))

# The library: canonical JSON, digests, keys, records, policy (no libbpf).
LIB_SRC   := $(sort $(wildcard user/lib/*.c user/jcs/*.c user/trace/*.c user/policy/*.c user/export/*.c) \
	     user/client/protocol.c)
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB_A     := $(BUILD)/libkwitness-core.a
# The collector pipeline: ring buffer event -> reorder -> canonical entry ->
# decision log writer -> transcript hash -> seal (signed record).
COLL_SRC  := $(sort $(wildcard user/collector/*.c))
COLL_OBJ  := $(COLL_SRC:%.c=$(BUILD)/%.o)
COLL_A    := $(BUILD)/libkwitness-collector.a
# The transparency log: C2SP tlog-tiles, signed notes, proofs, witnesses.
TLOG_SRC  := $(sort $(wildcard user/tlog/*.c))
TLOG_OBJ  := $(TLOG_SRC:%.c=$(BUILD)/%.o)
TLOG_A    := $(BUILD)/libkwitness-tlog.a
# The kernel-facing library: loader, maps, events (libbpf + skeleton).
KBPF_SRC  := $(sort $(wildcard user/bpf/*.c))
KBPF_OBJ  := $(KBPF_SRC:%.c=$(BUILD)/%.o)
KBPF_A    := $(BUILD)/libkwitness-bpf.a
# TPM 2.0 attestation: quotes, enrollment, evidence, appraisal (tpm2-tss).
TPM_SRC   := $(sort $(wildcard user/tpm/*.c))
TPM_OBJ   := $(TPM_SRC:%.c=$(BUILD)/%.o)
TPM_A     := $(BUILD)/libkwitness-tpm.a
# libkwitness, the client library runtimes link (include/kwitness/client.h):
# its own code and the two library units it needs, built position-independent
# with only the kwitness_* API visible, as build/lib/libkwitness.{so,a}.
CLIENT_SRC := $(filter-out user/client/protocol.c,$(sort $(wildcard user/client/*.c)))
CLIENT_OBJ := $(CLIENT_SRC:%.c=$(BUILD)/%.o)
CLIENT_PIC_SRC := $(CLIENT_SRC) user/lib/buf.c user/lib/cgroup.c
CLIENT_PIC_OBJ := $(CLIENT_PIC_SRC:%.c=$(BUILD)/pic/%.o)
CLIENT_SOVER := 2
CLIENT_SO := $(BUILD)/lib/libkwitness.so.$(CLIENT_SOVER)
CLIENT_A  := $(BUILD)/lib/libkwitness.a
EXAMPLE_BIN := $(BUILD)/examples/kwitness-client-example
# The estate database: verified records of many hosts in SQLite or
# PostgreSQL, and the queries over them. Its schema is the SQL files of
# user/estate/sql, built in as strings (estate_migrations.h).
ESTATE_SRC := $(sort $(wildcard user/estate/*.c))
ESTATE_OBJ := $(ESTATE_SRC:%.c=$(BUILD)/%.o)
ESTATE_A   := $(BUILD)/libkwitness-estate.a
ESTATE_SQL := $(sort $(wildcard user/estate/sql/*.sql))
ESTATE_MIGRATIONS := $(BUILD)/estate_migrations.h
# The verifier: one record (and its log, bundle, TPM evidence, tlog proof)
# to one verdict and level; a state folder's records on several threads.
VERIFY_SRC := $(sort $(wildcard user/verify/*.c))
VERIFY_OBJ := $(VERIFY_SRC:%.c=$(BUILD)/%.o)
VERIFY_A   := $(BUILD)/libkwitness-verify.a
# Attestations: a verified session as a DSSE-signed in-toto statement.
ATTEST_SRC := $(sort $(wildcard user/attest/*.c))
ATTEST_OBJ := $(ATTEST_SRC:%.c=$(BUILD)/%.o)
ATTEST_A   := $(BUILD)/libkwitness-attest.a
# An image's identity when none is given: the rootfs listing digest.
IMAGE_SRC := $(sort $(wildcard user/image/*.c))
IMAGE_OBJ := $(IMAGE_SRC:%.c=$(BUILD)/%.o)
IMAGE_A   := $(BUILD)/libkwitness-image.a
CLI_SRC   := $(sort $(wildcard user/cli/*.c))
CLI_OBJ   := $(CLI_SRC:%.c=$(BUILD)/%.o) $(CLIENT_OBJ)
# The CLI's control-socket client, for benchmarks.
CLI_LIB_OBJ := $(BUILD)/user/cli/client.o $(CLIENT_OBJ)
D_SRC     := $(sort $(wildcard user/kwitnessd/*.c))
D_OBJ     := $(D_SRC:%.c=$(BUILD)/%.o)

BPF_SRC   := bpf/kwitness.bpf.c
BPF_OBJ   := $(BUILD)/kwitness.bpf.o
SKEL      := $(BUILD)/kwitness.skel.h
VMLINUX   := $(BUILD)/vmlinux.h

# Unit tests: tests/unit/test_*.c, each linked with the library, under ASan+UBSan.
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/asan/tests/%)
ASAN_LIB_OBJ := $(COLL_SRC:%.c=$(BUILD)/asan/%.o) $(TLOG_SRC:%.c=$(BUILD)/asan/%.o) \
	$(LIB_SRC:%.c=$(BUILD)/asan/%.o)
ASAN_TPM_OBJ := $(TPM_SRC:%.c=$(BUILD)/asan/%.o)
# The verifier's tests link it, the TPM appraisal and the tlog checks.
ASAN_VERIFY_OBJ := $(VERIFY_SRC:%.c=$(BUILD)/asan/%.o)
# Test helper programs (tests/helpers/*.c), plain builds.
HELP_SRC  := $(sort $(wildcard tests/helpers/*.c))
HELP_BIN  := $(HELP_SRC:tests/helpers/%.c=$(BUILD)/tests/%)
# Fuzz targets: tests/fuzz/fuzz_*.c, libFuzzer with ASan+UBSan, each linked
# with the library built the same way (clang).
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN  := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_LIB_OBJ := $(COLL_SRC:%.c=$(BUILD)/fuzz/obj/%.o) $(TLOG_SRC:%.c=$(BUILD)/fuzz/obj/%.o) \
	$(LIB_SRC:%.c=$(BUILD)/fuzz/obj/%.o) \
	$(BUILD)/fuzz/obj/user/estate/entry.o $(BUILD)/fuzz/obj/user/estate/html.o
FUZZ_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all
# Benchmarks: bench/bench_*.c, optimised.
BENCH_SRC := $(sort $(wildcard bench/bench_*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
# Generators of benchmark inputs (bench/gen_*.c): not benchmarks themselves.
BENCH_GEN := $(patsubst bench/%.c,$(BUILD)/bench/%,$(sort $(wildcard bench/gen_*.c)))

.PHONY: all deps check check-kernels unit test-bins demo vmtest bench soak install uninstall clean fuzz fuzz-smoke
all: $(BUILD)/kwitness $(BUILD)/kwitnessd $(HELP_BIN) $(CLIENT_SO) $(CLIENT_A) $(EXAMPLE_BIN)

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

$(TLOG_A): $(TLOG_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(ESTATE_A): $(ESTATE_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(IMAGE_A): $(IMAGE_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(VERIFY_A): $(VERIFY_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(ATTEST_A): $(ATTEST_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(ESTATE_OBJ): CFLAGS += $(PQ_CFLAGS)
$(BUILD)/user/estate/migrate.o $(BUILD)/user/estate/bulk.o: $(ESTATE_MIGRATIONS)

# Each migration file as one C string, in file-name order.
$(ESTATE_MIGRATIONS): $(ESTATE_SQL)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  GEN     $@")
	$(Q){ echo 'static const char *const estate_migrations[] = {'; \
	  for f in $(ESTATE_SQL); do \
	    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $$f; echo ','; \
	  done; echo '};'; } >$@.tmp && mv $@.tmp $@

$(KBPF_A): $(KBPF_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(TPM_A): $(TPM_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC-PIC  $<")
	$(Q)$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -MMD -MP -c $< -o $@

$(CLIENT_SO): $(CLIENT_PIC_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -shared -Wl,-soname,libkwitness.so.$(CLIENT_SOVER) -Wl,-z,defs \
		-o $@ $^ -ljansson
	$(Q)ln -sf libkwitness.so.$(CLIENT_SOVER) $(BUILD)/lib/libkwitness.so

$(CLIENT_A): $(CLIENT_PIC_OBJ)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

# The runtime-side example, linked against the shared library as a runtime would.
$(EXAMPLE_BIN): examples/client/open_close.c include/kwitness/client.h $(CLIENT_SO)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $< -L$(BUILD)/lib -lkwitness -Wl,-rpath,'$$ORIGIN/../lib'

$(VMLINUX):
	@mkdir -p $(BUILD)
	$(if $(Q),@echo "  BTF     $@")
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BPF_OBJ): $(BPF_SRC) $(wildcard bpf/*.h) $(wildcard include/kwitness/abi/*.h) $(VMLINUX)
	$(if $(Q),@echo "  BPF     $<")
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) $(INCLUDES) -Wall -Werror -c $< -o $@

# Each bpf/*.bpf.h includes what it uses: compiled alone, each one must build.
BPF_HDRS       := $(sort $(wildcard bpf/*.bpf.h))
BPF_HDRS_STAMP := $(BUILD)/bpf/headers.stamp
$(BPF_HDRS_STAMP): $(BPF_HDRS) $(wildcard include/kwitness/abi/*.h) $(VMLINUX)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  BPFHDRS bpf/*.bpf.h")
	$(Q)for h in $(BPF_HDRS); do \
		printf '#include "%s"\n' "$$h" | $(CLANG) -fsyntax-only -g -O2 -target bpf \
			-D__TARGET_ARCH_$(ARCH) $(INCLUDES) -I. -Wall -Werror -x c - || exit 1; \
	done
	$(Q)touch $@

$(SKEL): $(BPF_OBJ) $(BPF_HDRS_STAMP)
	$(if $(Q),@echo "  SKEL    $@")
	$(Q)$(BPFTOOL) gen skeleton $< name kwitness_bpf > $@.tmp && mv $@.tmp $@

# The same object without the (weak) kfunc externs, for kernels whose vmlinux
# lacks them: libbpf would look them up in module BTF, which needs
# CAP_SYS_ADMIN. The loader opens the main skeleton over these bytes.
NOKF_OBJ  := $(BUILD)/kwitness-nokfunc.bpf.o
NOKF_SKEL := $(BUILD)/kwitness-nokfunc.skel.h
$(NOKF_OBJ): $(BPF_SRC) $(wildcard bpf/*.h) $(wildcard include/kwitness/abi/*.h) $(VMLINUX)
	$(if $(Q),@echo "  BPF     $@")
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -DKW_NO_KFUNCS $(INCLUDES) -Wall -Werror -c $< -o $@

$(NOKF_SKEL): $(NOKF_OBJ)
	$(if $(Q),@echo "  SKEL    $@")
	$(Q)$(BPFTOOL) gen skeleton $< name kwitness_nokfunc_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/user/bpf/load.o: $(NOKF_SKEL)

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

$(BUILD)/kwitness: $(CLI_OBJ) $(ATTEST_A) $(IMAGE_A) $(ESTATE_A) $(VERIFY_A) $(KBPF_A) $(COLL_A) $(TLOG_A) $(TPM_A) $(LIB_A)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(ATTEST_A) $(IMAGE_A) $(ESTATE_A) $(VERIFY_A) $(KBPF_A) $(COLL_A) $(TLOG_A) $(TPM_A) $(LIB_A) $(LIBS_BPF) $(LIBS_TPM) $(LIBS_ESTATE) $(LIBS_CORE)

# The privileged collector links no database client: it spools, and
# `kwitness estate push` ships (docs/estate.md, "Push from hosts"). Of the
# verifier it uses the checkpoint chain walk (sealing after a power loss).
$(BUILD)/kwitnessd: $(D_OBJ) $(VERIFY_A) $(KBPF_A) $(COLL_A) $(TLOG_A) $(TPM_A) $(LIB_A)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $(D_OBJ) $(VERIFY_A) $(KBPF_A) $(COLL_A) $(TLOG_A) $(TPM_A) $(LIB_A) $(LIBS_BPF) $(LIBS_TPM) $(LIBS_CORE) -lpthread

$(BUILD)/asan/tests/%: tests/unit/%.c $(ASAN_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  TEST    $@")
	$(Q)$(CC) $(SAN_CFLAGS) -o $@ $< $(ASAN_LIB_OBJ) -lcmocka $(LIBS_CORE)

# The estate's parsers (no database engine) and its HTML escaper.
ASAN_ESTATE_OBJ := $(BUILD)/asan/user/estate/entry.o $(BUILD)/asan/user/estate/html.o \
	$(BUILD)/asan/user/estate/ingest_pipe.o
$(BUILD)/asan/tests/test_estate $(BUILD)/asan/tests/test_text_safe: \
		$(BUILD)/asan/tests/%: tests/unit/%.c $(ASAN_ESTATE_OBJ) $(ASAN_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  TEST    $@")
	$(Q)$(CC) $(SAN_CFLAGS) -o $@ $< $(ASAN_ESTATE_OBJ) $(ASAN_LIB_OBJ) -lcmocka $(LIBS_CORE)

# DSSE envelopes (user/attest/dsse.c).
$(BUILD)/asan/tests/test_dsse: tests/unit/test_dsse.c $(BUILD)/asan/user/attest/dsse.o $(ASAN_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  TEST    $@")
	$(Q)$(CC) $(SAN_CFLAGS) -o $@ $< $(BUILD)/asan/user/attest/dsse.o $(ASAN_LIB_OBJ) -lcmocka $(LIBS_CORE)

# kwitness oci-hook's pod identity.
$(BUILD)/asan/tests/test_oci_identity: tests/unit/test_oci_identity.c \
		$(BUILD)/asan/user/cli/oci_identity.o $(ASAN_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  TEST    $@")
	$(Q)$(CC) $(SAN_CFLAGS) -o $@ $< $(BUILD)/asan/user/cli/oci_identity.o $(ASAN_LIB_OBJ) -lcmocka \
		$(LIBS_CORE)

# The TPM appraisal tests link the TPM library too.
$(BUILD)/asan/tests/test_tpm: tests/unit/test_tpm.c $(ASAN_TPM_OBJ) $(ASAN_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  TEST    $@")
	$(Q)$(CC) $(SAN_CFLAGS) -o $@ $< $(ASAN_TPM_OBJ) $(ASAN_LIB_OBJ) -lcmocka $(LIBS_TPM) $(LIBS_CORE)

$(BUILD)/asan/tests/test_verdict $(BUILD)/asan/tests/test_checkpoint $(BUILD)/asan/tests/test_profile_v03: \
		$(BUILD)/asan/tests/%: tests/unit/%.c $(ASAN_VERIFY_OBJ) $(ASAN_TPM_OBJ) $(ASAN_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  TEST    $@")
	$(Q)$(CC) $(SAN_CFLAGS) -o $@ $< $(ASAN_VERIFY_OBJ) $(ASAN_TPM_OBJ) $(ASAN_LIB_OBJ) -lcmocka \
		$(LIBS_TPM) $(LIBS_CORE) -lpthread

$(BUILD)/tests/%: tests/helpers/%.c $(KBPF_A) $(COLL_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(KBPF_A) $(COLL_A) $(LIB_A) $(LIBS_BPF) $(LIBS_CORE)

# A test build of the loader over an object whose kw_lsm_path_chmod every
# verifier refuses (KW_TEST_REFUSE): tests/vm/test_load.sh checks that one
# refused hook costs its class only, named with the kernel's reason.
REFUSE     := $(BUILD)/refuse
REFUSE_OBJ := $(KBPF_SRC:%.c=$(REFUSE)/%.o)
$(REFUSE)/kwitness.bpf.o: $(BPF_SRC) $(wildcard bpf/*.h) $(wildcard include/kwitness/abi/*.h) $(VMLINUX)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  BPF     $@")
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -DKW_TEST_REFUSE $(INCLUDES) -Wall -Werror -c $< -o $@

$(REFUSE)/kwitness.skel.h: $(REFUSE)/kwitness.bpf.o
	$(Q)$(BPFTOOL) gen skeleton $< name kwitness_bpf > $@.tmp && mv $@.tmp $@

$(REFUSE)/kwitness-nokfunc.bpf.o: $(BPF_SRC) $(wildcard bpf/*.h) $(wildcard include/kwitness/abi/*.h) $(VMLINUX)
	@mkdir -p $(dir $@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -DKW_TEST_REFUSE -DKW_NO_KFUNCS $(INCLUDES) -Wall -Werror -c $< -o $@

$(REFUSE)/kwitness-nokfunc.skel.h: $(REFUSE)/kwitness-nokfunc.bpf.o
	$(Q)$(BPFTOOL) gen skeleton $< name kwitness_nokfunc_bpf > $@.tmp && mv $@.tmp $@

$(REFUSE)/%.o: %.c $(REFUSE)/kwitness.skel.h $(REFUSE)/kwitness-nokfunc.skel.h $(PROBE_SKEL)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) -I$(REFUSE) $(CFLAGS) -c $< -o $@

$(BUILD)/tests/kw-hooktest-refuse: tests/helpers/kw-hooktest.c $(REFUSE_OBJ) $(COLL_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -DKW_HOOKTEST_REFUSE -o $@ $< $(REFUSE_OBJ) $(COLL_A) $(LIB_A) $(LIBS_BPF) $(LIBS_CORE)

# The benchmarks' own BPF programs, each its object and skeleton (NAME_bpf):
# the control programs (the floors), and bench_collector's in-kernel decision
# source, built on kwitness's own recording code (bpf/session.bpf.h).
$(BUILD)/bench/%.bpf.o: bench/%.bpf.c $(wildcard bpf/*.bpf.h) $(wildcard include/kwitness/abi/*.h) $(VMLINUX)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  BPF     $<")
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) $(INCLUDES) -Wall -Werror -c $< -o $@

$(BUILD)/bench/%.skel.h: $(BUILD)/bench/%.bpf.o
	$(if $(Q),@echo "  SKEL    $@")
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/bench/producer.bpf.o: bench/producer.h
$(BUILD)/bench/bench_hooks $(BUILD)/bench/bench_lsm: $(BUILD)/bench/floor.skel.h
$(BUILD)/bench/bench_lineage_floor: $(BUILD)/bench/lineage_floor.skel.h
$(BUILD)/bench/bench_collector: $(BUILD)/bench/producer.skel.h bench/producer.h
$(BUILD)/bench/bench_collector $(BUILD)/bench/bench_vs_auditd: bench/kwd_daemon.h

# Benchmarks link the same library units as kwitnessd (and the CLI's client).
$(BUILD)/bench/%: bench/%.c $(CLI_LIB_OBJ) $(KBPF_A) $(COLL_A) $(TLOG_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  BENCH   $@")
	$(Q)$(CC) $(CFLAGS) -O3 -o $@ $< $(CLI_LIB_OBJ) $(KBPF_A) $(COLL_A) $(TLOG_A) $(LIB_A) $(LIBS_BPF) $(LIBS_CORE) -lpthread

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC-FUZZ $<")
	$(Q)$(CLANG) $(CSTD) $(WARN) $(INCLUDES) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  FUZZ    $@")
	$(Q)$(CLANG) $(CSTD) $(WARN) $(INCLUDES) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJ) $(LIBS_CORE)

# The TPM appraisal target also needs user/tpm and tpm2-tss.
$(BUILD)/fuzz/fuzz_oci_identity: tests/fuzz/fuzz_oci_identity.c $(FUZZ_LIB_OBJ) \
		$(BUILD)/fuzz/obj/user/cli/oci_identity.o
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  FUZZ    $@")
	$(Q)$(CLANG) $(CSTD) $(WARN) $(INCLUDES) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< \
		$(BUILD)/fuzz/obj/user/cli/oci_identity.o $(FUZZ_LIB_OBJ) $(LIBS_CORE)

FUZZ_TPM_OBJ := $(TPM_SRC:%.c=$(BUILD)/fuzz/obj/%.o)
$(BUILD)/fuzz/fuzz_tpm: tests/fuzz/fuzz_tpm.c $(FUZZ_LIB_OBJ) $(FUZZ_TPM_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  FUZZ    $@")
	$(Q)$(CLANG) $(CSTD) $(WARN) $(INCLUDES) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_TPM_OBJ) $(FUZZ_LIB_OBJ) $(LIBS_TPM) $(LIBS_CORE)

$(BUILD)/fuzz/fuzz_tpm_commit: tests/fuzz/fuzz_tpm_commit.c $(FUZZ_LIB_OBJ) $(FUZZ_TPM_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  FUZZ    $@")
	$(Q)$(CLANG) $(CSTD) $(WARN) $(INCLUDES) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_TPM_OBJ) $(FUZZ_LIB_OBJ) $(LIBS_TPM) $(LIBS_CORE)

# The attestation target needs user/attest (no verifier functions).
FUZZ_ATTEST_OBJ := $(BUILD)/fuzz/obj/user/attest/dsse.o $(BUILD)/fuzz/obj/user/attest/intoto.o \
	$(BUILD)/fuzz/obj/user/attest/summary.o
$(BUILD)/fuzz/fuzz_attest: tests/fuzz/fuzz_attest.c $(FUZZ_LIB_OBJ) $(FUZZ_ATTEST_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  FUZZ    $@")
	$(Q)$(CLANG) $(CSTD) $(WARN) $(INCLUDES) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_ATTEST_OBJ) $(FUZZ_LIB_OBJ) $(LIBS_CORE)

# The metrics endpoint's parsers (kwitnessd's untrusted input over HTTP).
FUZZ_METRICS_OBJ := $(BUILD)/fuzz/obj/user/kwitnessd/metrics_request.o
$(BUILD)/fuzz/fuzz_metrics: tests/fuzz/fuzz_metrics.c $(FUZZ_LIB_OBJ) $(FUZZ_METRICS_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  FUZZ    $@")
	$(Q)$(CLANG) $(CSTD) $(WARN) $(INCLUDES) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_METRICS_OBJ) $(FUZZ_LIB_OBJ) $(LIBS_CORE)

# The checkpoints' transparency proofs as kwitness verify reads them.
FUZZ_CKPT_TLOG_OBJ := $(BUILD)/fuzz/obj/user/verify/checkpoint_tlog.o
$(BUILD)/fuzz/fuzz_ckpt_tlog: tests/fuzz/fuzz_ckpt_tlog.c $(FUZZ_LIB_OBJ) $(FUZZ_CKPT_TLOG_OBJ)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  FUZZ    $@")
	$(Q)$(CLANG) $(CSTD) $(WARN) $(INCLUDES) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_CKPT_TLOG_OBJ) $(FUZZ_LIB_OBJ) $(LIBS_CORE)

.SECONDARY: $(FUZZ_LIB_OBJ) $(FUZZ_TPM_OBJ) $(FUZZ_ATTEST_OBJ) $(FUZZ_METRICS_OBJ) $(FUZZ_CKPT_TLOG_OBJ)
fuzz: $(FUZZ_BIN)

# Each target for FUZZ_SECONDS (30) from its committed seed corpus; a crash fails.
fuzz-smoke: fuzz
	$(Q)tests/run.sh fuzz

# The benchmarks are built with the tests, so none can rot unnoticed.
test-bins: all $(UNIT_BIN) $(FUZZ_BIN) $(BENCH_BIN) $(BENCH_GEN) $(BUILD)/tests/kw-hooktest-refuse

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

# Every VM suite on every kernel of the matrix (Debian 12's 6.1, Debian 13's
# 6.12, Debian unstable's newest); `make check` runs the full suite on 6.1
# and the load, LSM, escape and exec-digest suites on the other two.
check-kernels:
	$(Q)scripts/deps.sh --if-missing
	$(Q)$(MAKE) --no-print-directory test-bins
	$(Q)tests/run.sh vm-all

bench: all $(BENCH_BIN) $(BENCH_GEN)
	$(Q)bench/run.sh

# Long campaigns: what `make check` runs in a short form, at full size: a
# 20 GB decision log through verify, the kill -9 loop with KT_KILLS (50)
# SIGKILLs of kwitnessd (make check: 8), then every fuzz target for
# SOAK_SECONDS (3600) from its corpus, one at a time, niced.
soak: test-bins
	$(Q)KW_BIG_LOG_BYTES=20000000000 bash tests/cli/test_verify_scale.sh
	$(Q)KT_KILLS=$${KT_KILLS:-50} bash tests/kernel/test_kwitnessd_resume.sh
	$(Q)FUZZ_SECONDS=$${SOAK_SECONDS:-3600} FUZZ_NICE=19 tests/fuzz/run.sh

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
# kwitnessd reads /etc/kwitness whatever the prefix; systemd looks for units
# of a /usr/local install in /usr/local/lib/systemd/system.
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
# Every file install writes, for uninstall (the config only when it is still
# the example: an edited one is the operator's).
INSTALLED = $(PREFIX)/bin/kwitness $(PREFIX)/sbin/kwitnessd \
	$(LIBDIR)/libkwitness.so.$(CLIENT_SOVER) $(LIBDIR)/libkwitness.so $(LIBDIR)/libkwitness.a \
	$(INCLUDEDIR)/kwitness/client.h $(LIBDIR)/pkgconfig/kwitness.pc \
	$(UNITDIR)/kwitnessd.service $(UNITDIR)/kwitness-estate-push.service \
	$(BASHCOMPDIR)/kwitness $(BASHCOMPDIR)/kwitnessd $(ZSHCOMPDIR)/_kwitness \
	$(SYSCONFDIR)/kwitness/kwitnessd.conf.example \
	$(patsubst man/%,$(MANDIR)/man%,$(foreach m,$(wildcard man/*.[1-8]),$(subst man/,man/$(subst .,,$(suffix $(m)))/,$(m))))
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCLUDEDIR)/kwitness $(DESTDIR)$(UNITDIR) $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(SYSCONFDIR)/kwitness
	install -m 0755 $(BUILD)/kwitness $(DESTDIR)$(PREFIX)/bin/kwitness
	install -m 0755 $(BUILD)/kwitnessd $(DESTDIR)$(PREFIX)/sbin/kwitnessd
	install -m 0755 $(CLIENT_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libkwitness.so.$(CLIENT_SOVER) $(DESTDIR)$(LIBDIR)/libkwitness.so
	install -m 0644 $(CLIENT_A) $(DESTDIR)$(LIBDIR)/
	install -m 0644 include/kwitness/client.h $(DESTDIR)$(INCLUDEDIR)/kwitness/client.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(CLIENT_SOVER)|' user/client/kwitness.pc.in \
		>$(DESTDIR)$(LIBDIR)/pkgconfig/kwitness.pc
	for m in man/*.[1-8]; do \
		[ -f "$$m" ] || continue; \
		s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; \
		install -m 0644 "$$m" $(DESTDIR)$(MANDIR)/man$$s/; \
	done
	for u in kwitnessd kwitness-estate-push; do \
		sed -e 's|/usr/local/sbin/|$(PREFIX)/sbin/|g' -e 's|/usr/local/bin/|$(PREFIX)/bin/|g' \
			examples/systemd/$$u.service >$(DESTDIR)$(UNITDIR)/$$u.service; \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u.service; \
	done
	install -m 0644 scripts/completion/kwitness.bash $(DESTDIR)$(BASHCOMPDIR)/kwitness
	ln -sf kwitness $(DESTDIR)$(BASHCOMPDIR)/kwitnessd
	sed 's|@BASH_COMPLETION@|$(BASHCOMPDIR)/kwitness|' scripts/completion/_kwitness \
		>$(DESTDIR)$(ZSHCOMPDIR)/_kwitness
	chmod 0644 $(DESTDIR)$(ZSHCOMPDIR)/_kwitness
	install -m 0644 examples/systemd/kwitnessd.conf $(DESTDIR)$(SYSCONFDIR)/kwitness/kwitnessd.conf.example
	[ -e $(DESTDIR)$(SYSCONFDIR)/kwitness/kwitnessd.conf ] || \
		install -m 0644 examples/systemd/kwitnessd.conf $(DESTDIR)$(SYSCONFDIR)/kwitness/kwitnessd.conf
	# the loader learns the new library; a staged (DESTDIR) install is not the system's
	if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi

# Removes what install wrote; the state (/var/lib/kwitness), the signing key
# and an edited kwitnessd.conf stay (docs/install.md says how to remove them).
uninstall:
	for f in $(INSTALLED); do rm -f "$(DESTDIR)$$f"; done
	if cmp -s examples/systemd/kwitnessd.conf $(DESTDIR)$(SYSCONFDIR)/kwitness/kwitnessd.conf; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/kwitness/kwitnessd.conf; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/kwitness/kwitnessd.conf ]; then \
		echo "kept $(DESTDIR)$(SYSCONFDIR)/kwitness/kwitnessd.conf (edited)"; \
	fi
	-rmdir $(DESTDIR)$(INCLUDEDIR)/kwitness $(DESTDIR)$(SYSCONFDIR)/kwitness 2>/dev/null
	if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

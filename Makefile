# vm-dhcp — single non-recursive Makefile.
#
#   make            build the programs into build/
#   make test       every test: unit (plain and ASan+UBSan), network-namespace integration
#                   (as root; skipped with a message otherwise), short fuzz pass, layer check
#   make demo       run the local-mode demo in throwaway network namespaces (root)
#   make image      OCI images of the controller and the agent in build/images (root, buildah)
#   make help       all targets
#
# Module sources are found by wildcard: every lib/*.c goes into build/lib.a, and so on for
# dhcp ipam crds kube agent controller (a module's main.c goes into its program instead).
# Every tests/unit/test-*.c and tests/netns/test-*.c is one CUnit binary linked with
# tests/runner.c, the module archives, and the fakes named in FAKES_<test> below.

BUILD ?= build
SAN ?=
CC ?= cc
V ?= 0
# The release version, from the file VERSION: compiled into both programs, the images' tags.
VMDHCP_VERSION := $(shell cat VERSION 2>/dev/null)

PKGS := libcurl jansson libevent libevent_openssl libnl-3.0 libnl-route-3.0 yaml-0.1 cunit openssl

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN := -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wmissing-prototypes \
	-Wstrict-prototypes -Wmissing-declarations -Wformat=2 -Wundef -Wvla \
	-Wno-unused-parameter -Wimplicit-fallthrough
OPT ?= -O2 -g
CFLAGS_ALL := -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 $(OPT) $(WARN) -I. \
	-fno-strict-aliasing -MMD -MP $(PKG_CFLAGS) $(EXTRA_CFLAGS)
LDFLAGS_ALL := $(EXTRA_LDFLAGS)
# mbed TLS 2.28 (Debian 12) ships no pkg-config file.
MBEDTLS_LIBS := -lmbedtls -lmbedx509 -lmbedcrypto
LIBS := $(PKG_LIBS) $(MBEDTLS_LIBS) -lm

ifeq ($(SAN),asan)
CFLAGS_ALL += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS_ALL += -fsanitize=address,undefined
endif
ifeq ($(SAN),fuzz)
CFLAGS_ALL += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all -DFUZZING_BUILD
LDFLAGS_ALL += -fsanitize=fuzzer,address,undefined
endif

ifeq ($(V),0)
Q := @
else
Q :=
endif

# A change of compiler or flags rebuilds everything (dnsmasq's trick).
FLAGS_HASH := $(shell printf '%s' '$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL)' | md5sum | cut -c1-10)
FLAGS_STAMP := $(BUILD)/.flags-$(FLAGS_HASH)

MODULES := lib dhcp ipam crds kube agent controller
# Link order: users before what they use.
LINK_ORDER := controller agent crds kube dhcp ipam lib

# kube/ has two transports behind kube-internal.h's kube_http_*: kube/http.c (libcurl, HTTP/2
# when offered: the controller) and kube/http-mbedtls.c (HTTP/1.1 over mbed TLS: the agent's
# Kubernetes mode, where libcurl's dependency tree would cost more memory than the agent's
# bar). The second stays out of kube.a and is linked by name where it is used.
ALT_SRCS := kube/http-mbedtls.c
mod_srcs = $(filter-out $(1)/main.c $(ALT_SRCS),$(wildcard $(1)/*.c))
mod_objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(call mod_srcs,$(1)))
ARCHIVES := $(foreach m,$(LINK_ORDER),$(if $(call mod_srcs,$(m)),$(BUILD)/$(m).a))

AGENT := $(if $(wildcard agent/main.c),$(BUILD)/vm-dhcp-agent)
CONTROLLER := $(if $(wildcard controller/main.c),$(BUILD)/vm-dhcp-controller)
APISERVER := $(if $(wildcard tests/apiserver/*.c),$(BUILD)/test-apiserver)
PROGRAMS := $(AGENT) $(CONTROLLER)

UNIT_SRCS := $(wildcard tests/unit/test-*.c)
NETNS_SRCS := $(wildcard tests/netns/test-*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
NETNS_BINS := $(patsubst tests/netns/%.c,$(BUILD)/tests/%,$(NETNS_SRCS))
FAKE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/fakes/*.c))
HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(HELPER_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz-*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
NETNS_SCRIPTS := $(wildcard tests/netns/test-*.sh)
E2E_SCRIPTS := $(wildcard tests/e2e/test-*.sh)

# Per-test fakes that replace a real module file at link time (linked before the archives):
#   FAKES_test-kube-informer := tests/fakes/fake-http.c
# (add lines here)
# The agent's Kubernetes mode runs on the mbed TLS transport (see ALT_SRCS above).
FAKES_test-agent-kube := kube/http-mbedtls.c
FAKES_test-kube-http-mbedtls := kube/http-mbedtls.c
# ... and each test binary depends on its fakes' objects (rebuilt when they change).
$(foreach t,$(patsubst FAKES_%,%,$(filter FAKES_%,$(.VARIABLES))),$(eval \
	$(BUILD)/tests/$(t): $(patsubst %.c,$(BUILD)/obj/%.o,$(FAKES_$(t)))))

.SECONDARY:

.PHONY: all programs tests unit netns-test asan test fuzz fuzz-short check-layers valgrind \
	demo bench-dhcp bench-kube bench-controller bench-e2e lint-charts clean format help \
	install-deps

all: programs

programs: $(PROGRAMS) $(APISERVER)

help:
	@sed -n '1,/^$$/p' Makefile | sed 's/^# \{0,1\}//'
	@echo "Targets: all test unit asan netns-test fuzz fuzz-short valgrind check-layers demo"
	@echo "         bench-dhcp bench-kube bench-ipam bench-controller bench-e2e bench-ippool-load"
	@echo "         lint-charts format clean image image-test"

$(FLAGS_STAMP):
	@mkdir -p $(BUILD)
	@rm -f $(BUILD)/.flags-*
	@touch $@

$(BUILD)/obj/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(filter 0,$(V)),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -c -o $@ $<

define archive_rule
$(BUILD)/$(1).a: $(call mod_objs,$(1))
	@$$(if $$(filter 0,$$(V)),echo "  AR      $$@")
	$$(Q)rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach m,$(MODULES),$(if $(call mod_srcs,$(m)),$(eval $(call archive_rule,$(m)))))

# The agent: agent/main.c defines forwarding functions for the Kubernetes-mode entry points
# that serve.c calls, so agent/source-kube.c and kube/ (but for kube/yaml.c) stay out of the
# binary and the Kubernetes client with mbed TLS is not mapped in local mode.
# Kubernetes mode is $(BUILD)/vm-dhcp-agent-kube.so, beside the binary, dlopen()ed on first use;
# it is built from position-independent copies of the modules and linked -Bsymbolic.
AGENT_LIBS := -Wl,--as-needed $(shell pkg-config --libs jansson libevent libnl-3.0 \
	libnl-route-3.0 yaml-0.1 2>/dev/null) -lm
AGENT_SO := $(BUILD)/vm-dhcp-agent-kube.so
AGENT_SO_MODS := agent crds dhcp ipam lib
AGENT_SO_OBJS := $(BUILD)/pic/agent/source-kube.o \
	$(patsubst %.c,$(BUILD)/pic/%.o,$(filter-out kube/http.c,$(call mod_srcs,kube)) kube/http-mbedtls.c)
AGENT_SO_ARCHIVES := $(foreach m,$(AGENT_SO_MODS),$(BUILD)/pic/$(m).a)
AGENT_SO_LDFLAGS := -shared -Wl,-Bsymbolic $(if $(SAN),,-Wl,--no-undefined)

$(BUILD)/pic/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(filter 0,$(V)),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -fPIC -MF $(@:.o=.d) -c -o $@ $<

define pic_archive_rule
$(BUILD)/pic/$(1).a: $(patsubst %.c,$(BUILD)/pic/%.o,$(call mod_srcs,$(1)))
	@$$(if $$(filter 0,$$(V)),echo "  AR      $$@")
	$$(Q)rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach m,$(AGENT_SO_MODS),$(eval $(call pic_archive_rule,$(m))))

$(AGENT_SO): $(AGENT_SO_OBJS) $(AGENT_SO_ARCHIVES)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_ALL) $(AGENT_SO_LDFLAGS) -o $@ $(AGENT_SO_OBJS) $(AGENT_SO_ARCHIVES) \
		$(AGENT_LIBS) $(MBEDTLS_LIBS)

programs: $(if $(AGENT),$(AGENT_SO))

$(BUILD)/vm-dhcp-agent: $(BUILD)/obj/agent/main.o $(ARCHIVES) | $(AGENT_SO)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(ARCHIVES) $(AGENT_LIBS)

# VMDHCP_VERSION for both programs' main.c (vm-dhcp-agent --version); a change of VERSION
# rebuilds them.
$(BUILD)/obj/agent/main.o $(BUILD)/obj/controller/main.o: VERSION
$(BUILD)/obj/agent/main.o $(BUILD)/obj/controller/main.o: \
	CFLAGS_ALL += -DVMDHCP_VERSION='"$(VMDHCP_VERSION)"'

$(BUILD)/vm-dhcp-controller: $(BUILD)/obj/controller/main.o $(ARCHIVES)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(ARCHIVES) $(LIBS)

$(BUILD)/test-apiserver: $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/apiserver/*.c)) $(ARCHIVES)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $(filter %.o,$^) $(ARCHIVES) $(LIBS)

# Test binaries: runner + test + its fakes + helpers + archives.
$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(BUILD)/obj/tests/runner.o $(FAKE_OBJS) $(HELPER_OBJS) $(ARCHIVES)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(BUILD)/obj/tests/runner.o \
		$(patsubst %.c,$(BUILD)/obj/%.o,$(FAKES_$*)) $(HELPER_OBJS) $(ARCHIVES) $(LIBS)

$(BUILD)/tests/test-netns-%: $(BUILD)/obj/tests/netns/test-netns-%.o $(BUILD)/obj/tests/runner.o $(HELPER_OBJS) $(ARCHIVES)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(BUILD)/obj/tests/runner.o $(HELPER_OBJS) $(ARCHIVES) $(LIBS)

$(BUILD)/fuzz/%: $(BUILD)/obj/tests/fuzz/%.o $(ARCHIVES)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(ARCHIVES) $(LIBS)

# The kube/ suites that talk to the test API server run twice: as built (libcurl transport)
# and as test-NAME-mbedtls, linked with kube/http-mbedtls.c instead.
KUBE_MBEDTLS_TESTS := test-kube-client test-kube-watch test-kube-informer test-kube-leader
UNIT_BINS += $(patsubst %,$(BUILD)/tests/%-mbedtls,$(filter $(KUBE_MBEDTLS_TESTS),$(patsubst tests/unit/%.c,%,$(UNIT_SRCS))))

$(BUILD)/tests/%-mbedtls: $(BUILD)/obj/tests/unit/%.o $(BUILD)/obj/kube/http-mbedtls.o $(BUILD)/obj/tests/runner.o $(FAKE_OBJS) $(HELPER_OBJS) $(ARCHIVES)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(BUILD)/obj/tests/runner.o $(BUILD)/obj/kube/http-mbedtls.o \
		$(patsubst %.c,$(BUILD)/obj/%.o,$(FAKES_$*)) $(HELPER_OBJS) $(ARCHIVES) $(LIBS)

tests: $(UNIT_BINS) $(NETNS_BINS) programs

# --- running tests -------------------------------------------------------------------------

# Unit tests (no root needed).
TEST_GROUP ?= unit
unit: $(UNIT_BINS)
	@tests/run-tests.sh $(TEST_GROUP) $(UNIT_BINS)

# Unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (separate build dir).
asan:
	@$(MAKE) --no-print-directory BUILD=build/asan SAN=asan TEST_GROUP=asan unit

# Network-namespace integration tests (root; they skip with exit 77 otherwise).
netns-test: $(NETNS_BINS) programs
	@tests/run-tests.sh netns $(NETNS_BINS) $(NETNS_SCRIPTS)

e2e-test: programs
	@tests/run-tests.sh e2e $(E2E_SCRIPTS)

# libFuzzer targets, built with clang in build/fuzz.
FUZZ_SECONDS ?= 600
fuzz:
	@$(MAKE) --no-print-directory BUILD=build/fuzz SAN=fuzz CC=clang fuzz-bins
	@tests/fuzz/run-fuzz.sh build/fuzz/fuzz/fuzz $(FUZZ_SECONDS)

# Short pass: the checked-in corpus plus a bounded number of new runs (part of `make test`).
fuzz-short:
	@$(MAKE) --no-print-directory BUILD=build/fuzz SAN=fuzz CC=clang fuzz-bins
	@tests/fuzz/run-fuzz.sh build/fuzz/fuzz/fuzz short

fuzz-bins: $(FUZZ_BINS)

valgrind: $(UNIT_BINS)
	@VALGRIND=1 tests/run-tests.sh valgrind $(UNIT_BINS)

check-layers:
	@scripts/check-layers.sh

# Everything CI needs: build, unit, sanitizers, layers, short fuzz, netns integration, e2e.
# `make test` and `make demo` are the README's commands on a fresh machine: they install their
# packages first, then re-enter make so pkg-config sees the new libraries.
test:
	@scripts/install-deps
	@$(MAKE) --no-print-directory all
	+@tests/run-all.sh

demo:
	@scripts/install-deps
	@$(MAKE) --no-print-directory all
	+@scripts/demo.sh

# scripts/bench-dhcp.sh installs the bench packages first, then builds.
bench-dhcp:
	@scripts/bench-dhcp.sh

lint-charts:
	@scripts/lint-charts.sh

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

install-deps:
	@scripts/install-deps

# OCI images of the programs as built, and the test-only pause image of tests/cluster/, into
# build/images (scripts/build-image.sh: buildah, offline, root; README "Images").
# image-test: tests/image/test-image.sh (part of `make test`).
image: programs
	@BUILD=$(BUILD) CC="$(CC)" scripts/build-image.sh

image-test: programs
	@BUILD=$(BUILD) tests/run-tests.sh image tests/image/test-image.sh
.PHONY: image image-test

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj $(BUILD)/pic -name '*.d' 2>/dev/null)

# IPAM benchmark: /16 memory, allocation cost amortised over filling a /16, rebuild.
$(BUILD)/bench/bench-ipam: $(BUILD)/obj/tests/bench/bench-ipam.o $(ARCHIVES)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(ARCHIVES) $(LIBS)

bench-ipam: $(BUILD)/bench/bench-ipam
	@$(BUILD)/bench/bench-ipam
.PHONY: bench-ipam

# Every test binary links the test API server harness (tests/helpers/apiserver.c), which
# starts BUILD/test-apiserver: build the server before the tests.
$(UNIT_BINS) $(NETNS_BINS): | $(APISERVER)

# Controller scale run (SPEC §5): 10 000 NICs bound in one pool against the test API server
# (in-process; `make bench-controller` below is the out-of-process end-to-end figure).
bench-controller-scale: $(BUILD)/tests/test-controller-scale $(APISERVER)
	@VMDHCP_CONTROLLER_SCALE=$${VMDHCP_CONTROLLER_SCALE:-10000} $(BUILD)/tests/test-controller-scale

# The test API server itself under valgrind: its harness puts valgrind in front of it and the
# tests assert that it exits with status 0.
APISERVER_TESTS := $(filter $(BUILD)/tests/test-apiserver-%,$(UNIT_BINS))
valgrind-apiserver: $(APISERVER_TESTS)
	@VMDHCP_APISERVER_WRAPPER="valgrind -q --error-exitcode=99 --leak-check=full \
		--show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect" \
		tests/run-tests.sh valgrind-apiserver $(APISERVER_TESTS)

# --- Kubernetes client benchmark (kube/) ----------------------------------------------------
$(BUILD)/bench-kube: $(BUILD)/obj/tests/bench/bench-kube.o $(HELPER_OBJS) $(ARCHIVES)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(HELPER_OBJS) $(ARCHIVES) $(LIBS)

bench-kube: $(BUILD)/bench-kube $(APISERVER)
	@scripts/bench-kube.sh $(BUILD)/bench-kube

# The program's own test runs the controller binary.
$(BUILD)/tests/test-controller-main: | $(CONTROLLER)

# --- end-to-end tests (tests/e2e) and the controller / end-to-end benchmarks ------------------
# tests/e2e/yaml2json.c: crds/*.yaml and examples/*.yaml to JSON lines for the scripts' POSTs.
$(BUILD)/e2e/yaml2json: $(BUILD)/obj/tests/e2e/yaml2json.o $(ARCHIVES)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(ARCHIVES) $(LIBS)

e2e-test: $(BUILD)/e2e/yaml2json

# Controller benchmark: 10 000 NICs in one pool bound end to end against build/test-apiserver
# (loopback); writes the "Controller" section of docs/benchmarks.md.
bench-controller: programs $(BUILD)/e2e/yaml2json
	@scripts/bench-controller.sh

# End-to-end benchmark: VMNetCfg created -> client bound (50 runs), agent RSS with 65 000
# bindings synced from the API server (root: network namespaces); "End to end" section of
# docs/benchmarks.md.
$(BUILD)/bench/bench-e2e-client: $(BUILD)/obj/tests/bench/bench-e2e-client.o $(ARCHIVES)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(ARCHIVES) $(LIBS)

bench-e2e: programs $(BUILD)/e2e/yaml2json $(BUILD)/bench/bench-e2e-client
	@scripts/bench-e2e.sh

# Controller memory at 10 000 KubeVirt VMs (SPEC §5: RSS under 32 MiB): the real binary against
# the test API server ("Controller" section of docs/benchmarks.md). BENCH_N overrides N.
.PHONY: bench-controller-rss
bench-controller-rss: programs
	@controller/bench-rss.sh

# IPPool loading with 65 000 bindings (the awk of scripts/bench-e2e.sh): json_loadb against
# ippool_json_loadb, load and decode time and heap (peak during the load, held after it).
$(BUILD)/bench/bench-ippool-load: $(BUILD)/obj/tests/bench/bench-ippool-load.o $(ARCHIVES)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(ARCHIVES) $(LIBS)

bench-ippool-load: $(BUILD)/bench/bench-ippool-load
	@awk -v n=$${BENCH_N:-65000} 'BEGIN { \
	    printf "{\"apiVersion\":\"network.harvesterhci.io/v1alpha1\",\"kind\":\"IPPool\","; \
	    printf "\"metadata\":{\"name\":\"big\",\"namespace\":\"default\"},\"spec\":{\"networkName\":"; \
	    printf "\"default/big\",\"ipv4Config\":{\"serverIP\":\"10.70.0.1\",\"cidr\":\"10.70.0.0/16\","; \
	    printf "\"pool\":{\"start\":\"10.70.0.10\",\"end\":\"10.70.255.250\"}}},"; \
	    printf "\"status\":{\"ipv4\":{\"used\":%d,\"available\":%d,\"allocated\":{", n, 65527 - n; \
	    for (i = 0; i < n; i++) { a = i + 10; \
	        printf "%s\"10.70.%d.%d\":\"52:54:01:%02x:%02x:%02x\"", (i ? "," : ""), int(a / 256), \
	            a % 256, int(i / 65536), int(i / 256) % 256, i % 256 } \
	    printf "}}}}" }' >$(BUILD)/bench/ippool-65000.json
	@$(BUILD)/bench/bench-ippool-load $(BUILD)/bench/ippool-65000.json
.PHONY: bench-ippool-load

# --- a real single-node Kubernetes (tests/cluster/) ------------------------------------------
# k8s-up: etcd, kube-apiserver, controller-manager, scheduler, containerd + runc, kubelet and
# CNI on this machine (root), Kubernetes built once from Debian's source package and cached in
# /var/cache/vm-dhcp/k8s; the images of `make image` imported. k8s-down stops all of it by PID.
# cluster-test: `make image`, then tests/cluster/test-cluster-e2e.sh (starts and stops the
# cluster itself unless it is up). CI runs it after `make test`.
k8s-up: image
	@tests/cluster/k8s-up.sh build/images/*-$(VMDHCP_VERSION).tar

k8s-down:
	@tests/cluster/k8s-down.sh

cluster-test: image
	@tests/run-tests.sh cluster tests/cluster/test-cluster-e2e.sh
.PHONY: k8s-up k8s-down cluster-test

# SPDX-License-Identifier: GPL-2.0
# dynprobe: top-level entry points. See README.md.
#
#   make setup    install and build everything (idempotent)
#   make          build dynprobe.ko against the cached kernel, or KDIR=...,
#                 and the API's sample modules (samples/)
#   make samples  only the sample modules (dynprobe.ko built first)
#   make workload the uprobe tests' program and library
#                 (selftests/uprobe/workload/, into build/uprobe-workload/)
#   make kbuild-rust  regenerate an installed distribution kernel's Rust
#                 crates (HEADERS=..., default the running kernel's)
#   make dkms-build   what dkms.conf runs: both of the above, the samples,
#                 and the API for other modules in /var/lib/dynprobe/api/
#   make check    host tests + guest selftests, ending in "N passed, N failed"
#   make check-debug the guest tests on the debug kernel (KASAN, kmemleak...)
#   make check-peer  the kernel's kprobe/dynevent ftracetests against dynprobe
#   make check-srcprobe  perf probe -D run again on the corpus of source-level
#                 places (cmd/tests/srcprobe/), its record rewritten, and
#                 dynprobe's answers compared with it
#   make bench    per-hit cost against the in-kernel probe events, and
#                 the command's look-ups beside perf probe's
#   make bench-lookups  only those: list --line, add --dry-run, perf probe
#                 -L and -D on the stock kernel's debug vmlinux
#   make bench-profile  where that cost goes, per function and slab cache
#   make stress   concurrent definitions, tracing and perf for STRESS_SECONDS
#   make stress-hostile  a seeded random sequence of holds on dynprobe's
#                 events from outside it against rmmod, clears and
#                 removals (SEED=N STEPS=M, KERNEL=stock)
#   make run      boot the guest, load the module and show it working
#   make shell    interactive guest with the module built
#   make deb      the Debian packages dynprobe-dkms and dynprobe, built in
#                 the forky root, in build/deb/ (tools/setup/deb)
#   make install-command  the dynprobe command, its completions and man page
#                 (PREFIX=/usr/local, DESTDIR; SYSTEM_CARGO=1 builds with
#                 the machine's cargo instead of the set-up root's)
# run, shell and check-peer take KERNEL=stock for Debian's stock kernel.

# The kernel's build system reads Kbuild, never this file; KERNELRELEASE
# may still be set here (dkms passes it).

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

ifeq ($(KDIR),)
# The kernel built by `make setup`, compiled in the trixie root.
KDIR_CACHED = $(shell $(TOP)/tools/setup/kernel --print-kdir)
# CLIPPY=1 builds with the kernel's clippy, KRUSTFLAGS adds rustc flags
# (make check: CLIPPY=1 KRUSTFLAGS=-Dwarnings); the root's make does not
# see the caller's variables otherwise.
KBUILD_PASS = $(if $(CLIPPY),CLIPPY=$(CLIPPY)) $(if $(KRUSTFLAGS),KRUSTFLAGS="$(KRUSTFLAGS)")
MAKE_KERNEL = $(TOP)/tools/setup/in-root make -C $(KDIR_CACHED) M=$(TOP) $(KBUILD_PASS)
MAKE_SAMPLES = $(TOP)/tools/setup/in-root make -C $(KDIR_CACHED) M=$(TOP)/samples $(KBUILD_PASS)
# User programs for the guest: the root's compiler and libc are the guest's.
MAKE_USER = $(TOP)/tools/setup/in-root make
else
# Any Rust-enabled Linux 7.2 build tree, with the host's toolchain.
MAKE_KERNEL = $(MAKE) -C $(KDIR) M=$(TOP) $(if $(LLVM),LLVM=$(LLVM))
MAKE_SAMPLES = $(MAKE) -C $(KDIR) M=$(TOP)/samples $(if $(LLVM),LLVM=$(LLVM))
MAKE_USER = $(MAKE)
endif
# The samples link against dynprobe.ko's exports.
SAMPLES_SYMBOLS = KBUILD_EXTRA_SYMBOLS=$(TOP)/Module.symvers

.PHONY: all module samples workload module-stock kbuild-rust dkms-build setup check check-host check-guest check-debug check-peer check-srcprobe bench bench-lookups bench-profile stress stress-hostile run shell clean install-command deb

all: module

module: workload
	$(MAKE_KERNEL) modules
	$(MAKE_SAMPLES) $(SAMPLES_SYMBOLS) modules

samples:
	$(MAKE_KERNEL) modules
	$(MAKE_SAMPLES) $(SAMPLES_SYMBOLS) modules

# The uprobe workload, a user program the guests run (any kernel's).
workload:
	$(MAKE_USER) -s -C $(TOP)/selftests/uprobe/workload O=$(TOP)/build/uprobe-workload

# dynprobe.ko and the samples for Debian's stock kernel, in
# build/module-stock/RELEASE/ (STOCK=RELEASE picks one of
# tools/setup/stock-kernels.txt; default the first fully tested one).
module-stock:
	$(TOP)/tools/setup/build-module-variant stock

# A distribution kernel's headers carry no Rust metadata: regenerate it
# from the kernel's source (tools/setup/kbuild-rust says what it needs).
KBUILD_RUST = $(TOP)/tools/setup/kbuild-rust $(if $(HEADERS),--headers $(HEADERS))
kbuild-rust:
	$(KBUILD_RUST)

# What dkms.conf runs: the Rust crates, dynprobe.ko, the API's samples
# against its exports (proof that the API links; DKMS installs only
# dynprobe.ko), then what other modules build against, per kernel, in
# $(DYNPROBE_API)/RELEASE: dynprobe's Module.symvers (for
# KBUILD_EXTRA_SYMBOLS) and the API's headers (include/dynprobe/api.h,
# include/dynprobe/rust/dynprobe.rs). It is replaced whole, never left
# half written.
DYNPROBE_API ?= /var/lib/dynprobe/api
DYNPROBE_API_FILES = include/dynprobe/api.h include/dynprobe/rust/dynprobe.rs
dkms-build:
	$(KBUILD_RUST)
	kdir=$$($(KBUILD_RUST) --print-out) && \
	$(MAKE) -C $$kdir M=$(TOP) modules && \
	$(MAKE) -C $$kdir M=$(TOP)/samples $(SAMPLES_SYMBOLS) modules && \
	api=$(DYNPROBE_API)/$$(cat $$kdir/include/config/kernel.release) && \
	rm -rf $$api.new && \
	install -D -m 0644 $(TOP)/Module.symvers $$api.new/Module.symvers && \
	for f in $(DYNPROBE_API_FILES); do install -D -m 0644 $(TOP)/$$f $$api.new/$$f || exit 1; done && \
	rm -rf $$api && mv $$api.new $$api && \
	echo "dynprobe's API for other modules: $$api"

# The dynprobe command (cmd/): DKMS installs the module, this the command
# beside it.
PREFIX ?= /usr/local
# Its completions and man page are made from its definition
# (cmd/src/cli.rs) by dynprobe-docs into build/cmd-target/share/.
COMMAND_DOCS = bash-completion/completions/dynprobe zsh/vendor-completions/_dynprobe \
	fish/vendor_completions.d/dynprobe.fish man/man8/dynprobe.8
install-command:
	$(if $(SYSTEM_CARGO),cd $(TOP)/cmd && cargo build --release --target-dir $(TOP)/build/cmd-target && \
		$(TOP)/build/cmd-target/release/dynprobe-docs $(TOP)/build/cmd-target/share >/dev/null,$(TOP)/tools/setup/command --release)
	install -D -m 0755 $(TOP)/build/cmd-target/release/dynprobe $(DESTDIR)$(PREFIX)/bin/dynprobe
	for f in $(COMMAND_DOCS); do \
		install -D -m 0644 $(TOP)/build/cmd-target/share/$$f $(DESTDIR)$(PREFIX)/share/$$f || exit 1; \
	done

# dynprobe-dkms (the module's source for DKMS) and dynprobe (the
# command), as Debian users install out-of-tree modules.
deb:
	$(TOP)/tools/setup/deb

setup:
	$(TOP)/tools/setup/root
	$(TOP)/tools/setup/guest-tools
	$(TOP)/tools/setup/kernel
	$(TOP)/tools/setup/stock
	$(TOP)/tools/setup/host

check:
	$(TOP)/tools/check/run

check-host:
	$(TOP)/tools/check/run --host-only

check-guest:
	$(TOP)/tools/check/run --guest-only

check-debug:
	$(TOP)/tools/check/run --debug

check-srcprobe:
	$(TOP)/tools/setup/command
	$(TOP)/tools/check/srcprobe-diff --perf

# KERNEL=stock: the guest boots Debian's stock kernel with its module
# (STOCK=RELEASE: another of tools/setup/stock-kernels.txt).
export DYNPROBE_STOCK_RELEASE := $(STOCK)
GUEST = $(if $(filter stock,$(KERNEL)),DYNPROBE_KERNEL=stock) $(TOP)/tools/guest/run
GUEST_MODULE = $(if $(filter stock,$(KERNEL)),module-stock,module)
GUEST_KO = $(if $(filter stock,$(KERNEL)),$(shell $(TOP)/tools/setup/build-module-variant --print-ko stock),$(TOP)/dynprobe.ko)

check-peer: $(GUEST_MODULE)
	$(GUEST) --timeout 1500 -- DYNPROBE_KO=$(GUEST_KO) bash tools/guest/peer-suite

# Instructions per hit on the stock kernel (deterministic, with the memory
# table), then wall time.
bench: module-stock
	$(TOP)/tools/bench/run --clock icount
	$(TOP)/tools/bench/run --clock wall --memory 0
	$(TOP)/tools/bench/lookups

# The command's source-level look-ups beside perf probe's, on the stock
# kernel's debug vmlinux (host, no guest).
bench-lookups:
	$(TOP)/tools/bench/lookups

# Per-function instructions of each pair of contenders behind a target,
# and slab bytes per event by cache: build/bench/stock-icount-profile/.
bench-profile: module-stock
	$(TOP)/tools/bench/run --profile

STRESS_SECONDS ?= 600
stress: module
	$(TOP)/tools/stress/run $(STRESS_SECONDS)

# tools/stress/guest-stress.py --hostile, one CPU: SEED=N replays a sequence
# (default: a new seed, printed), STEPS=M steps (0: until
# HOSTILE_SECONDS, default 600, have passed).
SEED ?=
STEPS ?= 500
HOSTILE_SECONDS ?= 600
stress-hostile: $(GUEST_MODULE)
	$(if $(filter stock,$(KERNEL)),DYNPROBE_KERNEL=stock) DYNPROBE_KO=$(GUEST_KO) \
		$(TOP)/tools/stress/run --hostile $(if $(SEED),--seed $(SEED)) --steps $(STEPS) \
		--seconds $(HOSTILE_SECONDS)

run: $(GUEST_MODULE)
	$(GUEST) -- DYNPROBE_KO=$(GUEST_KO) bash tools/guest/demo

shell: $(GUEST_MODULE)
	$(GUEST) --shell

clean:
	$(MAKE_KERNEL) clean
	$(MAKE_SAMPLES) clean
	rm -rf $(TOP)/build

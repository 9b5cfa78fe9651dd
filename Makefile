# SPDX-License-Identifier: GPL-2.0
# dynprobe: top-level entry points. See README.md.
#
#   make setup    install and build everything (idempotent)
#   make          build dynprobe.ko against the cached kernel, or KDIR=...
#   make check    host tests + guest selftests, ending in "N passed, N failed"
#   make check-debug the guest tests on the debug kernel (KASAN, kmemleak...)
#   make check-peer  the kernel's kprobe/dynevent ftracetests against dynprobe
#   make bench    per-hit cost against the in-kernel probe events
#   make stress   concurrent definitions, tracing and perf for STRESS_SECONDS
#   make run      boot the guest, load the module and show it working
#   make shell    interactive guest with the module built

ifneq ($(KERNELRELEASE),)
# Invoked by the kernel's build system: Kbuild has the module.
include $(src)/Kbuild
else

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

ifeq ($(KDIR),)
# The kernel built by `make setup`, compiled in the trixie root.
KDIR_CACHED = $(shell $(TOP)/tools/setup-kernel --print-kdir)
MAKE_KERNEL = $(TOP)/tools/in-root make -C $(KDIR_CACHED) M=$(TOP)
else
# Any Rust-enabled Linux 7.2 build tree, with the host's toolchain.
MAKE_KERNEL = $(MAKE) -C $(KDIR) M=$(TOP) $(if $(LLVM),LLVM=$(LLVM))
endif

.PHONY: all module setup check check-host check-guest check-debug check-peer bench stress run shell clean

all: module

module:
	$(MAKE_KERNEL) modules

setup:
	$(TOP)/tools/setup-root
	$(TOP)/tools/setup-kernel
	$(TOP)/tools/setup-host

check:
	$(TOP)/tools/check

check-host:
	$(TOP)/tools/check --host-only

check-guest:
	$(TOP)/tools/check --guest-only

check-debug:
	$(TOP)/tools/check --debug

check-peer: module
	$(TOP)/tools/guest --timeout 1500 -- bash tools/guest-peer-suite

bench: module
	$(TOP)/tools/bench

STRESS_SECONDS ?= 600
stress: module
	$(TOP)/tools/stress $(STRESS_SECONDS)

run: module
	$(TOP)/tools/guest -- bash tools/demo

shell: module
	$(TOP)/tools/guest --shell

clean:
	$(MAKE_KERNEL) clean
	rm -rf $(TOP)/build

endif

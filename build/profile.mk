# profile.mk: `make profile CMD="..."`: runs shell commands under QEMU's insn_profile
# plugin (build/profile/, docs/profiling.md) and prints where the instructions went.
# BASELINE="..." is subtracted function by function; PER=N divides by N requests;
# PLACEMENT (default 1) and SMP (default 2) as build/run's; MEMNODES=K boots K memory
# nodes beside it (not profiled).
.PHONY: profile
profile: all
	python3 build/profile/profile.py --cmd "$(CMD)" $(if $(BASELINE),--baseline "$(BASELINE)") \
		$(if $(PER),--per $(PER)) $(if $(PLACEMENT),--placement $(PLACEMENT)) $(if $(SMP),--smp $(SMP)) $(if $(APPEND),--append "$(APPEND)") \
		$(if $(MEMNODES),--memnodes $(MEMNODES))

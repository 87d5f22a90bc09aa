# user.mk: rules for user programs (lib/, apps/, servers/) and the boot image
# build/out/initrd.tar that carries them. Placeholder until the user runtime lands.
$(OUT)/initrd.tar:
	@mkdir -p $(OUT)/initrd
	tar --format=ustar -cf $@ -C $(OUT)/initrd .

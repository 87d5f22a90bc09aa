/* cpu_choice.c: which optional CPU features the kernels use, decided once on
 * the boot core from CPUID and the command line, and printed so that a
 * report from any machine says what ran:
 *     cpu: offers xsave avx x2apic ...; uses xsave avx x2apic; fpu xsave
 *     @json
 * {"kind":"cpu","offered":[...],"used":[...],"disabled":[...],"fpu":"xsave","hypervisor":"KVMKVMKVM"}
 */
#include "cpu_choice.h"
#include "console.h"
#include "cpu_features.h"
#include "shared.h"
#include <format.h>

#define FEATURE_LIST_BYTES 160

static uint32_t features_turned_off(void)
{
    uint32_t off = 0;
    if (command_line_option(CPU_OPTION_NO_XSAVE, NULL, 0))
        off |= 1u << CPU_FEATURE_XSAVE;
    if (command_line_option(CPU_OPTION_NO_X2APIC, NULL, 0))
        off |= 1u << CPU_FEATURE_X2APIC;
    if (command_line_option(CPU_OPTION_NO_PCID, NULL, 0))
        off |= 1u << CPU_FEATURE_PCID;
    return off;
}

/* The names of the features in `set`: space-separated, or as a JSON list's
 * quoted, comma-separated items when `quoted`. */
static void feature_list(uint32_t set, bool quoted, char *text, uint64_t size)
{
    uint64_t length = 0;
    text[0] = '\0';
    for (int feature = 0; feature < CPU_FEATURE_COUNT; feature++) {
        if (!cpu_feature_has(set, feature))
            continue;
        const char *name = cpu_feature_name(feature);
        length += format_string(text + length, size - length, quoted ? "%s\"%s\"" : "%s%s",
                                length == 0 ? ""
                                : quoted    ? ","
                                            : " ",
                                name);
        if (length >= size)
            return;
    }
}

static void report(const struct cpu_features *features)
{
    char offered[FEATURE_LIST_BYTES], used[FEATURE_LIST_BYTES], disabled[FEATURE_LIST_BYTES];
    const char *fpu = cpu_feature_has(features->used, CPU_FEATURE_XSAVE) ? "xsave" : "fxsave";
    feature_list(features->offered, false, offered, sizeof(offered));
    feature_list(features->used, false, used, sizeof(used));
    feature_list(features->disabled, false, disabled, sizeof(disabled));
    kprintf("cpu: offers %s; uses %s; fpu %s%s%s%s%s\n", offered, used[0] ? used : "none", fpu,
            disabled[0] ? "; turned off: " : "", disabled,
            features->hypervisor[0] ? "; hypervisor " : "", features->hypervisor);
    feature_list(features->offered, true, offered, sizeof(offered));
    feature_list(features->used, true, used, sizeof(used));
    feature_list(features->disabled, true, disabled, sizeof(disabled));
    kprintf("@json {\"kind\":\"cpu\",\"offered\":[%s],\"used\":[%s],\"disabled\":[%s],"
            "\"fpu\":\"%s\",\"hypervisor\":\"%s\"}\n",
            offered, used, disabled, fpu, features->hypervisor);
}

void cpu_choice_make(void)
{
    struct cpuid_leaves leaves;
    cpuid_leaves_read(&leaves);
    cpu_features_decide(&leaves, features_turned_off(), &kernel_shared->cpu);
    report(&kernel_shared->cpu);
}

/* share_weight.c: `hostile weight [driver]`: SYS_SHARE_WEIGHT's refusals (0,
 * above SHARE_WEIGHT_MAX, above an ordinary account's without device access)
 * and the weights it takes, each an @json "hostile" case. */
#include "hostile.h"
#include <formica/errors.h>
#include <formica/protocol/syscalls.h>
#include <formica/syscalls.h>
#include <stdbool.h>
#include <string.h>

int try_share_weights(const char *mode)
{
    bool driver = mode != NULL && strcmp(mode, "driver") == 0;
    expect("weight_zero", system_call_share_weight(0), -E_INVALID);
    expect("weight_above_max", system_call_share_weight(SHARE_WEIGHT_MAX + 1), -E_INVALID);
    expect("weight_above_one", system_call_share_weight(SHARE_WEIGHT_ONE * 3),
           driver ? 0 : -E_PERMISSION);
    expect("weight_below_one", system_call_share_weight(SHARE_WEIGHT_ONE / 3), 0);
    expect("weight_one", system_call_share_weight(SHARE_WEIGHT_ONE), 0);
    return hostile_failures() == 0 ? 0 : 1;
}

/* build/linux/include/formica/placement_rule.h: on Linux the scheduler
 * places Bonnie's processes (BONNIE_LINUX_PIN=1 pins process i to CPU
 * i mod CPUs instead, like Formica's spread rule on a machine without
 * server cores). */
#pragma once
#include <stdint.h>
#include <formica/user.h>

uint32_t placement_app_core(const struct placement_info *placement, uint32_t index, uint32_t total);

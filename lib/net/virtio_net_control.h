/* virtio_net_control.h: virtio-net's control queue (virtio_net.c
 * uses it when the device offers VIRTIO_NET_F_CTRL_VQ and _CTRL_RX). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Queue 2 and its command buffer; before DRIVER_OK. */
long virtio_net_control_set_up(uint16_t io);
/* VIRTIO_NET_CTRL_RX_PROMISC: 0, or -E_IO when the device refused or did not answer. */
long virtio_net_promiscuous(bool on);

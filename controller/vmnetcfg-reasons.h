/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_VMNETCFG_REASONS_H
#define VMDHCP_CONTROLLER_VMNETCFG_REASONS_H

/*
 * The VirtualMachineNetworkConfig condition and Event reasons the NIC rules give
 * (nicbind.c, nicbind6.c). A header of its own (no .c of its name): both files use it.
 */

/* Reasons (condition reasons and Event reasons). */
#define VMNETCFG_REASON_ALLOCATED "Allocated"  /* Allocated True; Normal Event */
#define VMNETCFG_REASON_RELEASED "Released"    /* Normal Event */
#define VMNETCFG_REASON_IN_SYNC "InSync"       /* InSynced True */
#define VMNETCFG_REASON_PENDING "Pending"      /* InSynced False: some NIC Pending */
#define VMNETCFG_REASON_STALE "Stale"	       /* InSynced False: released NICs wait */
#define VMNETCFG_REASON_NOT_PAUSED "NotPaused" /* Disabled False */
#define VMNETCFG_REASON_NO_IPPOOL "NoIPPool"
#define VMNETCFG_REASON_NOT_READY "IPPoolNotReady"
#define VMNETCFG_REASON_DUPLICATE_MAC "DuplicateMAC"
#define VMNETCFG_REASON_STATIC_CONFLICT "StaticIPConflict"
#define VMNETCFG_REASON_STATIC_UNAVAILABLE "StaticIPUnavailable"
#define VMNETCFG_REASON_EXHAUSTED "PoolExhausted"
#define VMNETCFG_REASON_PAUSED "Paused"
#define VMNETCFG_REASON_INVALID_MAC "InvalidMAC"
#define VMNETCFG_REASON_ADDRESS_TAKEN "AddressTaken" /* the remembered address is held */
/* the IPPool object would outgrow the API server's request limit (--ippool-status-budget) */
#define VMNETCFG_REASON_STATUS_FULL "PoolStatusFull"

#define VMNETCFG_MESSAGE_MAX 256

#endif

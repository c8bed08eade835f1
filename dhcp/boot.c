/* SPDX-License-Identifier: Apache-2.0 */
/* Network boot: client options 60/77/93/94/97 -> the answer -> siaddr, file, 60/66/67/97. */
#include "dhcp/boot.h"

#include <errno.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/util.h"

static const char *const kind_names[_DHCP_BOOT_MAX] = {
    [DHCP_BOOT_BIOS] = "bios",
    [DHCP_BOOT_UEFI] = "uefi",
    [DHCP_BOOT_UEFI_ARM64] = "uefi-arm64",
    [DHCP_BOOT_UEFI_HTTP] = "uefi-http",
    [DHCP_BOOT_IPXE] = "ipxe",
    [DHCP_BOOT_OTHER] = "other",
};

const char *
dhcp_boot_kind_name(enum dhcp_boot_kind k)
{
	return (unsigned)k < _DHCP_BOOT_MAX ? kind_names[k] : "other";
}

/* RFC 4578 §2.1 and the IANA "Processor Architecture Types" registry. */
enum dhcp_boot_kind
dhcp_boot_arch_kind(uint16_t arch)
{
	switch (arch) {
	case 0: /* Intel x86PC (BIOS) */
		return DHCP_BOOT_BIOS;
	case 6: /* EFI IA32 */
	case 7: /* EFI BC (x86-64) */
	case 9: /* EFI x86-64 */
		return DHCP_BOOT_UEFI;
	case 11: /* ARM 64-bit UEFI */
		return DHCP_BOOT_UEFI_ARM64;
	case 15: /* x86 UEFI HTTP */
	case 16: /* x64 UEFI HTTP */
		return DHCP_BOOT_UEFI_HTTP;
	default:
		return DHCP_BOOT_OTHER;
	}
}

static int
put_string_tlv(uint8_t code, const char *s, size_t cap, uint8_t *out, uint16_t *ret_len)
{
	const char *end = memchr(s, '\0', cap);
	size_t n;

	if (end == NULL)
		return -EINVAL;
	n = (size_t)(end - s);
	if (n > DHCP_BOOT_NAME_MAX)
		return -EINVAL;
	*ret_len = 0;
	if (n == 0)
		return 0;
	out[0] = code;
	out[1] = (uint8_t)n;
	memcpy(out + 2, s, n);
	*ret_len = (uint16_t)(n + 2);
	return 0;
}

int
dhcp_boot_compile(struct dhcp_boot_set *set, const struct dhcp_boot *b)
{
	int r;

	memset(set, 0, sizeof(*set));
	r = put_string_tlv(DHCP_OPT_TFTP_SERVER, b->tftp_server_name, sizeof(b->tftp_server_name),
	    set->opt66, &set->opt66_len);
	if (r < 0)
		return r;
	for (size_t k = 0; k < DHCP_BOOT_OTHER; k++) {
		uint16_t len;

		r = put_string_tlv(
		    DHCP_OPT_BOOTFILE, b->files[k], sizeof(b->files[k]), set->opt67[k], &len);
		if (r < 0)
			return r;
		set->file_len[k] = len != 0 ? (uint16_t)(len - 2) : 0;
		set->any |= len != 0;
	}
	/* the unused slot must be empty too: a kind never answered carries nothing */
	if (b->files[DHCP_BOOT_OTHER][0] != '\0')
		return -EINVAL;
	return 0;
}

static bool
has_prefix(const uint8_t *v, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return v != NULL && len >= n && memcmp(v, prefix, n) == 0;
}

/* Option 77: the plain string "iPXE" (iPXE's form), or an RFC 3004 instance that is "iPXE". */
static bool
user_class_ipxe(const uint8_t *v, size_t len)
{
	if (v == NULL)
		return false;
	if (len == 4 && memcmp(v, "iPXE", 4) == 0)
		return true;
	/* RFC 3004 §4: UC_Len_i (>= 1) then that many bytes, to the end of the option */
	for (size_t i = 0; i < len;) {
		size_t n = v[i];

		if (n == 0 || n > len - i - 1)
			return false;
		if (n == 4 && memcmp(v + i + 1, "iPXE", 4) == 0)
			return true;
		i += 1 + n;
	}
	return false;
}

bool
dhcp_boot_classify(const struct dhcp_boot_set *set, const struct dhcp_option_table *opts,
    struct dhcp_boot_req *ret)
{
	const uint8_t *v;
	size_t len = 0;
	bool malformed = false, client;
	enum dhcp_boot_kind kind;

	memset(ret, 0, sizeof(*ret));
	ret->kind = -1;
	v = dhcp_option_get(opts, DHCP_OPT_VENDOR_CLASS, &len);
	ret->pxe = has_prefix(v, len, "PXEClient");
	ret->http = has_prefix(v, len, "HTTPClient");
	v = dhcp_option_get(opts, DHCP_OPT_USER_CLASS, &len);
	ret->ipxe = user_class_ipxe(v, len);
	v = dhcp_option_get(opts, DHCP_OPT_CLIENT_ARCH, &len);
	client = v != NULL;
	if (v != NULL && len >= 2 && len % 2 == 0) {
		ret->has_arch = true;
		ret->arch = be16_get(v);
	} else if (v != NULL) {
		malformed = true;
	}
	v = dhcp_option_get(opts, DHCP_OPT_CLIENT_NDI, &len);
	if (v != NULL && (len != 3 || v[0] != 1))
		malformed = true;
	v = dhcp_option_get(opts, DHCP_OPT_CLIENT_UUID, &len);
	if (v != NULL && len == 17 && v[0] == 0)
		ret->uuid = v;
	else if (v != NULL)
		malformed = true;
	/* not a boot client (94 and 97 alone are nobody's business), or a pool without boot
	 * answers: nothing to answer, nothing to count */
	if ((!client && !ret->pxe && !ret->http && !ret->ipxe) || !set->any)
		return false;
	if (ret->ipxe && set->file_len[DHCP_BOOT_IPXE] != 0)
		kind = DHCP_BOOT_IPXE;
	else if (ret->has_arch)
		kind = dhcp_boot_arch_kind(ret->arch);
	else
		kind = DHCP_BOOT_OTHER;
	if (kind != DHCP_BOOT_OTHER && set->file_len[kind] == 0)
		kind = DHCP_BOOT_OTHER;
	ret->kind = (int8_t)kind;
	return malformed;
}

void
dhcp_boot_header(const struct dhcp_boot_set *set, const struct dhcp_boot *b,
    const struct dhcp_boot_req *req, struct dhcp_msg *m)
{
	size_t n;

	if (!dhcp_boot_answers(req))
		return;
	be32_put(m->siaddr, b->next_server);
	n = set->file_len[req->kind];
	if (n <= DHCP_BOOT_FILE_FIELD_MAX)
		memcpy(m->file, set->opt67[req->kind] + 2, n); /* NUL-padded: m was zeroed */
}

static const uint8_t opt60_pxe[] = {
    DHCP_OPT_VENDOR_CLASS, 9, 'P', 'X', 'E', 'C', 'l', 'i', 'e', 'n', 't'};
static const uint8_t opt60_http[] = {
    DHCP_OPT_VENDOR_CLASS, 10, 'H', 'T', 'T', 'P', 'C', 'l', 'i', 'e', 'n', 't'};

const uint8_t *
dhcp_boot_option(const struct dhcp_boot_set *set, const struct dhcp_boot_req *req, uint8_t code,
    bool asked, uint8_t uuid_tlv[19], size_t *ret_len, bool *ret_mandatory)
{
	*ret_len = 0;
	*ret_mandatory = false;
	if (!dhcp_boot_answers(req))
		return NULL;
	switch (code) {
	case DHCP_OPT_BOOTFILE: {
		size_t n = set->file_len[req->kind];

		*ret_mandatory = n > DHCP_BOOT_FILE_FIELD_MAX;
		if (!asked && !*ret_mandatory)
			return NULL;
		*ret_len = n + 2;
		return set->opt67[req->kind];
	}
	case DHCP_OPT_TFTP_SERVER:
		if (set->opt66_len == 0 || (!asked && !req->pxe))
			return NULL;
		*ret_len = set->opt66_len;
		return set->opt66;
	case DHCP_OPT_VENDOR_CLASS:
		*ret_mandatory = true;
		if (req->kind == DHCP_BOOT_UEFI_HTTP) {
			*ret_len = sizeof(opt60_http);
			return opt60_http;
		}
		if (!req->pxe)
			return NULL;
		*ret_len = sizeof(opt60_pxe);
		return opt60_pxe;
	case DHCP_OPT_CLIENT_UUID:
		if (!req->pxe || req->uuid == NULL)
			return NULL;
		*ret_mandatory = true;
		uuid_tlv[0] = DHCP_OPT_CLIENT_UUID;
		uuid_tlv[1] = 17;
		memcpy(uuid_tlv + 2, req->uuid, 17);
		*ret_len = 19;
		return uuid_tlv;
	default:
		return NULL;
	}
}

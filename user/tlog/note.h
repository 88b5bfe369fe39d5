/* SPDX-License-Identifier: Apache-2.0 */
/* C2SP signed notes (c2sp.org/signed-note), their Ed25519 keys and verifier
 * keys ("vkeys"), the log signature (type 0x01) and the timestamped witness
 * cosignature (c2sp.org/tlog-cosignature, type 0x04), and the checkpoint that
 * a log signs (c2sp.org/tlog-checkpoint). */
#ifndef KWITNESS_TLOG_NOTE_H
#define KWITNESS_TLOG_NOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "tlog/merkle.h"

struct kw_key;

#define TLOG_NAME_MAX 256
/* The spec asks verifiers to accept at least 16 signatures. */
#define TLOG_NOTE_SIGS_MAX 32
/* A note (checkpoint + signatures) larger than this is refused. */
#define TLOG_NOTE_MAX (64 * 1024)
#define TLOG_SIG_ED25519 0x01
#define TLOG_SIG_COSIGNATURE 0x04
/* name + '+' + 8 hex + '+' + base64(33 bytes) + NUL */
#define TLOG_VKEY_MAX (TLOG_NAME_MAX + 1 + 8 + 1 + 44 + 1)

/* A named Ed25519 key of one signature type: a verifier, or a signer when
 * key holds the private half. */
struct tlog_key {
	char name[TLOG_NAME_MAX];
	uint8_t type;
	uint32_t keyid;
	uint8_t pub[32];
	struct kw_key *key; /* owned */
};

/* True when name is a valid key name: non-empty, printable, no space or '+'. */
bool tlog_key_name_valid(const char *name, size_t len);
/* SHA-256(name || "\n" || type || pub)[:4], big-endian. */
uint32_t tlog_key_id(const char *name, uint8_t type, const uint8_t pub[32]);
/* From a loaded key; takes ownership of k on success. */
int tlog_key_from(const char *name, uint8_t type, struct kw_key *k, struct tlog_key *out);
/* Parses a vkey "<name>+<hex key ID>+<base64(type || pub)>"; the key ID must
 * match the one computed from the rest. 0 or -EINVAL. */
int tlog_key_parse_vkey(const char *s, size_t len, struct tlog_key *out);
int tlog_key_vkey(const struct tlog_key *k, char out[TLOG_VKEY_MAX]);
void tlog_key_clear(struct tlog_key *k);

struct tlog_note_sig {
	const char *name; /* into the note, not NUL-terminated */
	size_t name_len;
	uint32_t keyid;
	const char *b64; /* the base64 signature, key ID included */
	size_t b64_len;
	const char *line; /* the whole line with its newline */
	size_t line_len;
};

/* A parsed note: pointers into the caller's buffer. */
struct tlog_note {
	const char *text; /* the signed text, final newline included */
	size_t text_len;
	struct tlog_note_sig sigs[TLOG_NOTE_SIGS_MAX];
	size_t nsigs;
};

/* Parses a signed note: UTF-8 without control characters but newline, text,
 * an empty line, one or more signature lines. 0 or -EINVAL / -E2BIG. */
int tlog_note_parse(const char *buf, size_t len, struct tlog_note *out);

/* Appends "— <name> base64(keyid || sig)\n" signing text with k (a signer).
 * For a cosignature, timestamp is the POSIX time it states. */
int tlog_note_sign(const struct tlog_key *k, const char *text, size_t text_len,
		   uint64_t timestamp, struct kw_buf *out);
/* Checks the note's signatures by k (same name and key ID; others are
 * ignored). 0 when one verifies and none fails (*timestamp set for a
 * cosignature), -ENOENT when the note has none by k, -EBADMSG when one fails. */
int tlog_note_verify(const struct tlog_note *n, const struct tlog_key *k, uint64_t *timestamp);

struct tlog_checkpoint {
	char origin[TLOG_NAME_MAX];
	uint64_t size;
	struct tlog_hash root;
};

/* The checkpoint in a note's text: origin, decimal size (no leading zero),
 * base64 root hash, then extension lines (kept in the text, not parsed). */
int tlog_checkpoint_parse(const char *text, size_t len, struct tlog_checkpoint *out);
int tlog_checkpoint_format(const struct tlog_checkpoint *cp, struct kw_buf *out);

/* Decimal without leading zeros (but "0"), at most 2^63 - 1. */
int tlog_parse_u64(const char *s, size_t len, uint64_t *out);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_APISERVER_SERVER_H
#define VMDHCP_APISERVER_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

struct event_base;

/* The HTTPS front end of the test API server (routing, watches, fault injection). */
struct server_config {
	const char *token;	 /* bearer token (borrowed) */
	const char *data_file;	 /* --data or NULL (borrowed) */
	size_t history;		 /* watch history window in events */
	size_t history_bytes;	 /* and in serialised bytes (0 = no bound) */
	unsigned bookmark_secs;	 /* BOOKMARK period for watches that ask */
	size_t max_watch_buffer; /* bytes queued to one watcher before it is dropped */
};

struct server;

/* base and ssl are borrowed. Loads cfg->data_file when it exists. Returns 0 or -errno. */
int server_new(
    struct event_base *base, SSL_CTX *ssl, const struct server_config *cfg, struct server **ret);
/* Bind host:port (port 0 = any). Returns the bound port or negative errno. */
int server_listen(struct server *srv, const char *host, int port);
/* Save to the data file (if any). Returns 0 or negative errno. */
int server_save(struct server *srv);
/* Ends every watch, closes connections, frees. Accepts NULL, returns NULL. */
struct server *server_free(struct server *srv);

#endif

/* placement.c: parses placement files ("key value" lines naming the core of
 * each server, or the cores of its instances, and the application cores)
 * into struct placement_info, and describes a placement in one line.
 * Freestanding: no allocation, no libc. */
#include "placement.h"
#include <stdbool.h>
#include <string.h>

#define SPAN_QUOTE_LIMIT 24 /* characters of user text quoted in a message */
#define TOKENS_PER_LINE 2

/* The servers' keys are enum placement_server, in its order (generated from
 * the placement lines of protocol/NAME.messages); "app" and "memnode" (the
 * memory-node role, which the shell starts, not init) follow them. */
enum placement_key { KEY_APP = PLACEMENT_SERVERS, KEY_MEMNODE, KEY_COUNT };
static const char *const key_names[KEY_COUNT] = {PLACEMENT_SERVER_KEYS, "app", "memnode"};
/* From the manifests: which servers may run as several instances, and which
 * are started only when the placement names them. */
static const bool may_have_instances[PLACEMENT_SERVERS] = {PLACEMENT_SERVER_INSTANCES};
static const bool is_optional[PLACEMENT_SERVERS] = {PLACEMENT_SERVER_OPTIONAL};
static const int beside_server[PLACEMENT_SERVERS] = {PLACEMENT_SERVER_BESIDE};

struct span {
    const char *start;
    size_t length;
};

struct server_choice {
    bool other_socket; /* resolved after every line is read */
    bool per_core;     /* the same: one instance on every application core */
    uint32_t core;
    uint32_t line;           /* where it was set; 0 = not named (core 0) */
    uint32_t instance_count; /* a list's cores (0: a single core, `core`) */
    uint32_t instance_cores[SERVER_INSTANCES_MAX];
};

struct parse_state {
    uint32_t core_count;
    const uint32_t *core_socket;
    struct placement_error *errors;
    unsigned max_errors;
    int error_count;
    uint32_t key_line[KEY_COUNT]; /* 0 = key not seen yet */
    struct server_choice servers[PLACEMENT_SERVERS];
    bool app_spread;
    uint32_t app_count;
    uint32_t app_cores[PLACEMENT_MAX_APP_CORES];
    bool memnode_placed;
    uint32_t memnode_core;
};

/* ---- Messages ---------------------------------------------------------- */

struct message {
    char *text;
    size_t size;
    size_t length;
};

static void message_char(struct message *message, char character)
{
    if (message->length + 1 < message->size) {
        message->text[message->length++] = character;
        message->text[message->length] = '\0';
    }
}

static void message_text(struct message *message, const char *text)
{
    while (*text != '\0')
        message_char(message, *text++);
}

static void message_unsigned(struct message *message, uint32_t value)
{
    char digits[10];
    int count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    while (count > 0)
        message_char(message, digits[--count]);
}

/* User text, shortened and with unprintable bytes shown as '?'. */
static void message_span(struct message *message, struct span span)
{
    size_t shown = span.length > SPAN_QUOTE_LIMIT ? SPAN_QUOTE_LIMIT : span.length;
    for (size_t i = 0; i < shown; i++) {
        char character = span.start[i];
        message_char(message, character >= ' ' && character <= '~' ? character : '?');
    }
    if (shown < span.length)
        message_text(message, "...");
}

static struct message message_start(char *text, size_t size)
{
    struct message message = {text, size, 0};
    if (size > 0)
        text[0] = '\0';
    return message;
}

/* Counts an error; returns its message to fill in, or NULL once the
 * caller's array is full (the error still counts). */
static struct message *error_begin(struct parse_state *state, uint32_t line,
                                   struct message *message)
{
    unsigned index = (unsigned)state->error_count++;
    if (state->errors == NULL || index >= state->max_errors)
        return NULL;
    state->errors[index].line = line;
    *message = message_start(state->errors[index].message, PLACEMENT_MESSAGE_BYTES);
    return message;
}

static void error_simple(struct parse_state *state, uint32_t line, const char *text)
{
    struct message storage;
    struct message *message = error_begin(state, line, &storage);
    if (message != NULL)
        message_text(message, text);
}

/* before + the user's text + after. */
static void error_span(struct parse_state *state, uint32_t line, const char *before,
                       struct span span, const char *after)
{
    struct message storage;
    struct message *message = error_begin(state, line, &storage);
    if (message == NULL)
        return;
    message_text(message, before);
    message_span(message, span);
    message_text(message, after);
}

/* Appends to the error just begun (nothing once the caller's array is full). */
static void error_append_text(struct parse_state *state, const char *text)
{
    unsigned index = (unsigned)state->error_count - 1;
    if (state->errors == NULL || index >= state->max_errors)
        return;
    struct message message = {state->errors[index].message, PLACEMENT_MESSAGE_BYTES,
                              strlen(state->errors[index].message)};
    message_text(&message, text);
}

static void error_append_key(struct parse_state *state, enum placement_key key)
{
    error_append_text(state, key_names[key]);
}

static void error_no_such_core(struct parse_state *state, uint32_t line, struct span number)
{
    struct message storage;
    struct message *message = error_begin(state, line, &storage);
    if (message == NULL)
        return;
    message_text(message, "core ");
    message_span(message, number);
    message_text(message, " does not exist (");
    message_unsigned(message, state->core_count);
    message_text(message, state->core_count == 1 ? " core)" : " cores)");
}

static void error_duplicate_key(struct parse_state *state, uint32_t line, enum placement_key key)
{
    struct message storage;
    struct message *message = error_begin(state, line, &storage);
    if (message == NULL)
        return;
    message_text(message, "duplicate key '");
    message_text(message, key_names[key]);
    message_text(message, "' (first on line ");
    message_unsigned(message, state->key_line[key]);
    message_char(message, ')');
}

/* ---- Lexing ------------------------------------------------------------ */

static bool is_blank(char character)
{
    return character == ' ' || character == '\t' || character == '\r' || character == '\v' ||
           character == '\f';
}

static bool span_equals(struct span span, const char *word)
{
    size_t length = strlen(word);
    return span.length == length && memcmp(span.start, word, length) == 0;
}

/* The line without its comment and its line ending. */
static struct span line_content(struct span line)
{
    for (size_t i = 0; i < line.length; i++) {
        if (line.start[i] == '#') {
            line.length = i;
            break;
        }
    }
    return line;
}

/* Splits into at most `max` tokens; returns how many there are in all. */
static unsigned split_tokens(struct span line, struct span *tokens, unsigned max)
{
    unsigned count = 0;
    size_t i = 0;
    while (i < line.length) {
        while (i < line.length && is_blank(line.start[i]))
            i++;
        if (i == line.length)
            break;
        size_t start = i;
        while (i < line.length && !is_blank(line.start[i]))
            i++;
        if (count < max)
            tokens[count] = (struct span){line.start + start, i - start};
        count++;
    }
    return count;
}

/* Decimal digits only; saturates at UINT32_MAX (which no core has). */
static bool parse_number(struct span span, uint32_t *value)
{
    if (span.length == 0)
        return false;
    uint64_t result = 0;
    for (size_t i = 0; i < span.length; i++) {
        char character = span.start[i];
        if (character < '0' || character > '9')
            return false;
        result = result * 10 + (uint64_t)(character - '0');
        if (result > UINT32_MAX)
            result = UINT32_MAX;
    }
    *value = (uint32_t)result;
    return true;
}

static int find_key(struct span span)
{
    for (int key = 0; key < KEY_COUNT; key++)
        if (span_equals(span, key_names[key]))
            return key;
    return -1;
}

/* ---- Values ------------------------------------------------------------ */

/* Reports a core number that no core has; returns whether it exists. */
static bool check_core_exists(struct parse_state *state, uint32_t line, struct span number,
                              uint32_t core)
{
    if (core < state->core_count)
        return true;
    error_no_such_core(state, line, number);
    return false;
}

static bool server_list_contains(const struct server_choice *choice, uint32_t core)
{
    for (uint32_t i = 0; i < choice->instance_count; i++)
        if (choice->instance_cores[i] == core)
            return true;
    return false;
}

/* One element of a server's list of instance cores. */
static bool add_instance_core(struct parse_state *state, uint32_t line, enum placement_key key,
                              struct span element, struct span whole)
{
    struct server_choice *choice = &state->servers[key];
    uint32_t core;
    if (!parse_number(element, &core)) {
        error_span(state, line, "bad value '", whole,
                   "' (expected a core, a list like 1,5,9, per-core or other-socket)");
        return false;
    }
    if (!check_core_exists(state, line, element, core))
        return false;
    if (server_list_contains(choice, core)) {
        error_span(state, line, "core ", element, " listed twice for ");
        error_append_key(state, key);
        return false;
    }
    if (choice->instance_count == SERVER_INSTANCES_MAX) {
        error_simple(state, line, "too many cores for one server (at most 64 instances)");
        return false;
    }
    choice->instance_cores[choice->instance_count++] = core;
    return true;
}

static void parse_server_list(struct parse_state *state, uint32_t line, enum placement_key key,
                              struct span value)
{
    size_t start = 0;
    for (size_t i = 0; i <= value.length; i++) {
        if (i < value.length && value.start[i] != ',')
            continue;
        if (!add_instance_core(state, line, key, (struct span){value.start + start, i - start},
                               value))
            return;
        start = i + 1;
    }
    state->servers[key].core = state->servers[key].instance_cores[0];
}

static bool is_instance_value(struct span value)
{
    if (span_equals(value, "per-core"))
        return true;
    for (size_t i = 0; i < value.length; i++)
        if (value.start[i] == ',')
            return true;
    return false;
}

static void parse_server_value(struct parse_state *state, uint32_t line, enum placement_key key,
                               struct span value)
{
    struct server_choice *choice = &state->servers[key];
    choice->line = line;
    if (span_equals(value, "other-socket")) {
        choice->other_socket = true;
        return;
    }
    if (is_instance_value(value) && !may_have_instances[key]) {
        error_span(state, line, "bad value '", value, "' for ");
        error_append_key(state, key);
        error_append_text(state, " (one instance: a core or other-socket)");
        return;
    }
    if (span_equals(value, "per-core")) {
        choice->per_core = true;
        return;
    }
    if (is_instance_value(value)) {
        parse_server_list(state, line, key, value);
        return;
    }
    uint32_t core;
    if (!parse_number(value, &core)) {
        error_span(state, line, "bad value '", value,
                   may_have_instances[key]
                       ? "' (expected a core, a list like 1,5,9, per-core or other-socket)"
                       : "' (expected a core number or other-socket)");
        return;
    }
    if (check_core_exists(state, line, value, core))
        choice->core = core;
}

static bool app_list_contains(const struct parse_state *state, uint32_t core)
{
    for (uint32_t i = 0; i < state->app_count; i++)
        if (state->app_cores[i] == core)
            return true;
    return false;
}

/* One element of a comma-separated list: an existing core, not repeated. */
static bool add_app_core(struct parse_state *state, uint32_t line, struct span element,
                         struct span whole)
{
    uint32_t core;
    if (!parse_number(element, &core)) {
        error_span(state, line, "bad value '", whole,
                   "' for app (a core, a list like 0,2,3, or spread)");
        return false;
    }
    if (!check_core_exists(state, line, element, core))
        return false;
    if (app_list_contains(state, core)) {
        error_span(state, line, "core ", element, " listed twice for app");
        return false;
    }
    if (state->app_count == PLACEMENT_MAX_APP_CORES) {
        error_simple(state, line, "too many app cores (at most 64)");
        return false;
    }
    state->app_cores[state->app_count++] = core;
    return true;
}

static void parse_app_list(struct parse_state *state, uint32_t line, struct span value)
{
    size_t start = 0;
    for (size_t i = 0; i <= value.length; i++) {
        if (i < value.length && value.start[i] != ',')
            continue;
        struct span element = {value.start + start, i - start};
        if (!add_app_core(state, line, element, value))
            return;
        start = i + 1;
    }
}

static void parse_app_value(struct parse_state *state, uint32_t line, struct span value)
{
    if (span_equals(value, "spread")) {
        state->app_spread = true;
        return;
    }
    parse_app_list(state, line, value);
}

/* memnode: one core, nothing else (the role is one process). */
static void parse_memnode_value(struct parse_state *state, uint32_t line, struct span value)
{
    uint32_t core;
    if (!parse_number(value, &core)) {
        error_span(state, line, "bad value '", value, "' for memnode (expected a core number)");
        return;
    }
    if (!check_core_exists(state, line, value, core))
        return;
    state->memnode_placed = true;
    state->memnode_core = core;
}

static void parse_value(struct parse_state *state, uint32_t line, enum placement_key key,
                        struct span value)
{
    if (key == KEY_APP)
        parse_app_value(state, line, value);
    else if (key == KEY_MEMNODE)
        parse_memnode_value(state, line, value);
    else
        parse_server_value(state, line, key, value);
}

static void parse_line(struct parse_state *state, uint32_t line_number, struct span line)
{
    if (line.length > PLACEMENT_LINE_LIMIT) {
        error_simple(state, line_number, "line too long (more than 256 characters)");
        return;
    }
    struct span tokens[TOKENS_PER_LINE];
    unsigned count = split_tokens(line_content(line), tokens, TOKENS_PER_LINE);
    if (count == 0)
        return;
    if (count != TOKENS_PER_LINE) {
        error_simple(state, line_number, "malformed line (expected 'key value')");
        return;
    }
    int key = find_key(tokens[0]);
    if (key < 0) {
        error_span(state, line_number, "unknown key '", tokens[0], "'");
        return;
    }
    if (state->key_line[key] != 0) {
        error_duplicate_key(state, line_number, (enum placement_key)key);
        return;
    }
    state->key_line[key] = line_number;
    parse_value(state, line_number, (enum placement_key)key, tokens[1]);
}

/* Calls parse_line for each line; a final line needs no line ending. */
static void parse_lines(struct parse_state *state, const char *text, size_t length)
{
    uint32_t line_number = 0;
    size_t start = 0;
    while (start < length) {
        size_t end = start;
        while (end < length && text[end] != '\n')
            end++;
        size_t content = end - start;
        if (content > 0 && text[end - 1] == '\r')
            content--;
        parse_line(state, ++line_number, (struct span){text + start, content});
        start = end + 1;
    }
}

/* ---- Resolution -------------------------------------------------------- */

static uint32_t socket_of(const struct parse_state *state, uint32_t core)
{
    return state->core_socket != NULL ? state->core_socket[core] : 0;
}

/* The lowest-numbered core on a socket other than `reference`'s. */
static bool find_other_socket_core(const struct parse_state *state, uint32_t reference,
                                   uint32_t *core)
{
    uint32_t socket = socket_of(state, reference);
    for (uint32_t candidate = 0; candidate < state->core_count; candidate++) {
        if (socket_of(state, candidate) != socket) {
            *core = candidate;
            return true;
        }
    }
    return false;
}

/* fs's other-socket is relative to core 0; every other server's to fs's core. */
static void resolve_other_sockets(struct parse_state *state)
{
    for (int server = 0; server < PLACEMENT_SERVERS; server++) {
        struct server_choice *choice = &state->servers[server];
        if (!choice->other_socket)
            continue;
        uint32_t reference = server == SERVER_FS ? 0 : state->servers[SERVER_FS].core;
        if (!find_other_socket_core(state, reference, &choice->core))
            error_simple(state, choice->line, "other-socket needs at least two sockets");
    }
}

/* A server the file does not name, declared `beside` another, takes that one's core. */
static void resolve_beside(struct parse_state *state)
{
    for (int server = 0; server < PLACEMENT_SERVERS; server++) {
        struct server_choice *choice = &state->servers[server];
        if (beside_server[server] >= 0 && choice->line == 0)
            choice->core = state->servers[beside_server[server]].core;
    }
}

/* Adds `core` to the choice's instance cores, keeping them in increasing order. */
static void insert_in_order(struct server_choice *choice, uint32_t core)
{
    uint32_t position = choice->instance_count;
    while (position > 0 && choice->instance_cores[position - 1] > core) {
        choice->instance_cores[position] = choice->instance_cores[position - 1];
        position--;
    }
    choice->instance_cores[position] = core;
    choice->instance_count++;
}

/* per-core: one instance on every core that runs applications (every core
 * for spread), in increasing order, at most SERVER_INSTANCES_MAX of them. */
static void resolve_per_core(struct parse_state *state)
{
    for (int server = 0; server < PLACEMENT_SERVERS; server++) {
        struct server_choice *choice = &state->servers[server];
        if (!choice->per_core)
            continue;
        choice->instance_count = 0;
        if (state->app_spread)
            for (uint32_t core = 0; core < state->core_count && core < SERVER_INSTANCES_MAX; core++)
                insert_in_order(choice, core);
        else if (state->app_count == 0)
            insert_in_order(choice, 0); /* app not named: core 0 */
        for (uint32_t i = 0; !state->app_spread && i < state->app_count; i++)
            if (choice->instance_count < SERVER_INSTANCES_MAX)
                insert_in_order(choice, state->app_cores[i]);
        choice->core = choice->instance_cores[0];
    }
}

/* A core the spread rule keeps applications off: one running a server that
 * has a single instance, or the memory-node role. A server with several
 * instances runs beside the applications on purpose (each reaches the
 * instance on its own core). */
static bool is_server_core(const struct placement_info *placement, uint32_t core)
{
    if (placement->memnode_placed && placement->memnode_core == core)
        return true;
    for (int server = 0; server < PLACEMENT_SERVERS; server++)
        if (placement->server_instance_count[server] == 1 &&
            placement->server_instance_cores[server][0] == core)
            return true;
    return false;
}

/* Cores without a server first (the preferred ones), then the server cores. */
static void fill_spread(struct placement_info *out, uint32_t core_count)
{
    uint32_t count = 0;
    for (int pass = 0; pass < 2; pass++) {
        bool want_server = pass == 1;
        for (uint32_t core = 0; core < core_count && count < PLACEMENT_MAX_APP_CORES; core++)
            if (is_server_core(out, core) == want_server)
                out->app_cores[count++] = core;
        if (pass == 0)
            out->app_preferred_count = count;
    }
    out->app_spread = 1;
    out->app_core_count = count;
}

/* A server's cores: its list, per-core's cores, or its one core; none for
 * an optional server the file does not name (init does not start it). */
static void fill_server(const struct server_choice *choice, int server, struct placement_info *out)
{
    out->server_core[server] = choice->core;
    if (is_optional[server] && choice->line == 0) {
        out->server_instance_count[server] = 0;
        return;
    }
    if (choice->instance_count == 0) {
        out->server_instance_count[server] = 1;
        out->server_instance_cores[server][0] = choice->core;
        return;
    }
    out->server_instance_count[server] = choice->instance_count;
    memcpy(out->server_instance_cores[server], choice->instance_cores,
           choice->instance_count * sizeof(choice->instance_cores[0]));
}

static void fill_result(const struct parse_state *state, struct placement_info *out)
{
    memset(out->server_instance_cores, 0, sizeof(out->server_instance_cores));
    for (int server = 0; server < PLACEMENT_SERVERS; server++)
        fill_server(&state->servers[server], server, out);
    memset(out->app_cores, 0, sizeof(out->app_cores));
    out->warnings = 0;
    out->memnode_placed = state->memnode_placed ? 1 : 0;
    out->memnode_core = state->memnode_core;
    if (state->app_spread) {
        fill_spread(out, state->core_count);
        return;
    }
    out->app_spread = 0;
    out->app_core_count = 1; /* app not named: core 0 */
    out->app_cores[0] = 0;
    if (state->app_count > 0) {
        out->app_core_count = state->app_count;
        memcpy(out->app_cores, state->app_cores, state->app_count * sizeof(state->app_cores[0]));
    }
    out->app_preferred_count = out->app_core_count;
}

/* ---- Public ------------------------------------------------------------ */

void placement_default(uint32_t core_count, struct placement_info *out)
{
    (void)core_count;
    memset(out, 0, sizeof(*out));
    strncpy(out->name, "default", sizeof(out->name) - 1);
    out->app_preferred_count = 1;
    out->app_core_count = 1;
    for (int server = 0; server < PLACEMENT_SERVERS; server++)
        out->server_instance_count[server] = is_optional[server] ? 0 : 1; /* on core 0 */
}

int placement_parse(const char *text, size_t length, uint32_t core_count,
                    const uint32_t *core_socket, struct placement_info *out,
                    struct placement_error *errors, unsigned max_errors)
{
    struct parse_state state;
    memset(&state, 0, sizeof(state));
    state.core_count = core_count == 0 ? 1 : core_count;
    state.core_socket = core_socket;
    state.errors = errors;
    state.max_errors = max_errors;
    parse_lines(&state, text, length);
    resolve_per_core(&state);
    resolve_other_sockets(&state);
    resolve_beside(&state);
    if (state.error_count > 0) {
        placement_default(core_count, out);
        out->warnings = (uint32_t)state.error_count;
        return state.error_count;
    }
    fill_result(&state, out);
    return 0;
}

/* ---- Description ------------------------------------------------------- */

static void describe_cores(struct message *message, const uint32_t *cores, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        if (i > 0)
            message_char(message, ',');
        message_char(message, 'C');
        message_unsigned(message, cores[i]);
    }
}

static void describe_app(struct message *message, const struct placement_info *placement)
{
    uint32_t count = placement->app_core_count;
    if (count > PLACEMENT_MAX_APP_CORES)
        count = PLACEMENT_MAX_APP_CORES;
    if (!placement->app_spread) {
        describe_cores(message, placement->app_cores, count);
        return;
    }
    uint32_t preferred =
        placement->app_preferred_count > count ? count : placement->app_preferred_count;
    message_text(message, "spread(");
    describe_cores(message, placement->app_cores, preferred);
    message_char(message, '|');
    describe_cores(message, placement->app_cores + preferred, count - preferred);
    message_char(message, ')');
}

void placement_describe(const struct placement_info *placement, char *buffer, size_t size)
{
    struct message message = message_start(buffer, size);
    for (int server = 0; server < PLACEMENT_SERVERS; server++) {
        uint32_t count = placement->server_instance_count[server];
        if (count == 0)
            continue; /* an optional server not started */
        message_text(&message, key_names[server]);
        message_char(&message, '=');
        describe_cores(&message, placement->server_instance_cores[server],
                       count > SERVER_INSTANCES_MAX ? SERVER_INSTANCES_MAX : count);
        message_char(&message, ' ');
    }
    message_text(&message, "app=");
    describe_app(&message, placement);
    if (placement->memnode_placed) {
        message_text(&message, " memnode=C");
        message_unsigned(&message, placement->memnode_core);
    }
}

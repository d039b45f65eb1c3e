// The toml++ bridge: the only C++ in BrainlessLab (see toml_bridge.h).
//
// toml++ reports errors by exception (or by parse_result when built without
// exceptions), allocates with operator new and keeps keys sorted. This file
// turns all of that into a plain tree and bl_status codes: every entry point
// catches everything, so no exception ever unwinds into C frames.
#include "plan/toml_bridge.h"
#include "core/file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

struct bl_toml_node {
    bl_toml_type type = BL_TOML_TABLE;
    uint32_t line = 0;
    uint32_t column = 0;
    std::string text;  // string value, or a date/time in TOML notation
    int64_t integer = 0;
    double number = 0.0;
    bool boolean = false;
    std::vector<std::string> keys;                       // tables only, document order
    std::vector<std::unique_ptr<bl_toml_node>> children;  // table values or array elements
};

struct bl_toml_doc {
    std::unique_ptr<bl_toml_node> root;
};

namespace {

// Nesting beyond this is refused: the tree is copied recursively, and no plan
// needs more than a handful of levels.
constexpr int max_depth = 200;

struct depth_error {
    uint32_t line, column;
};

void set_position(bl_toml_node &out, const toml::source_region &src)
{
    out.line = src.begin.line;
    out.column = src.begin.column;
}

std::unique_ptr<bl_toml_node> convert(const toml::node &in, int depth)
{
    if (depth > max_depth)
        throw depth_error{in.source().begin.line, in.source().begin.column};
    auto out = std::make_unique<bl_toml_node>();
    set_position(*out, in.source());
    switch (in.type()) {
    case toml::node_type::table: {
        out->type = BL_TOML_TABLE;
        const toml::table &t = *in.as_table();
        // toml++ orders keys alphabetically; restore the order of the file.
        std::vector<std::pair<const toml::key *, const toml::node *>> entries;
        for (auto &&[k, v] : t)
            entries.emplace_back(&k, &v);
        std::stable_sort(entries.begin(), entries.end(), [](const auto &a, const auto &b) {
            const auto &pa = a.first->source().begin, &pb = b.first->source().begin;
            return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
        });
        for (const auto &e : entries) {
            out->keys.emplace_back(e.first->str());
            out->children.push_back(convert(*e.second, depth + 1));
        }
        break;
    }
    case toml::node_type::array: {
        out->type = BL_TOML_ARRAY;
        for (const toml::node &v : *in.as_array())
            out->children.push_back(convert(v, depth + 1));
        break;
    }
    case toml::node_type::string:
        out->type = BL_TOML_STRING;
        out->text = in.as_string()->get();
        break;
    case toml::node_type::integer:
        out->type = BL_TOML_INTEGER;
        out->integer = in.as_integer()->get();
        break;
    case toml::node_type::floating_point:
        out->type = BL_TOML_FLOAT;
        out->number = in.as_floating_point()->get();
        break;
    case toml::node_type::boolean:
        out->type = BL_TOML_BOOLEAN;
        out->boolean = in.as_boolean()->get();
        break;
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time: {
        out->type = in.type() == toml::node_type::date ? BL_TOML_DATE
                    : in.type() == toml::node_type::time ? BL_TOML_TIME
                                                          : BL_TOML_DATE_TIME;
        std::ostringstream s;
        if (auto d = in.as_date())
            s << d->get();
        else if (auto t = in.as_time())
            s << t->get();
        else if (auto dt = in.as_date_time())
            s << dt->get();
        out->text = s.str();
        break;
    }
    default:
        // toml::node_type::none cannot occur in a parsed tree.
        out->type = BL_TOML_STRING;
        break;
    }
    return out;
}

// toml++ descriptions are one line, but keep the promise of one-line messages
// even if a future version quotes a raw newline from the input.
std::string one_line(std::string_view s)
{
    std::string r(s);
    for (char &c : r)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            c = ' ';
    return r;
}

// toml++ bounds the nesting of arrays and inline tables, but not the number
// of parts of a dotted key: `a.a.a...a = 1` with 10^5 parts overflows the
// stack inside toml++ (found with ASan), before this bridge sees the tree.
// Every key lies on one line, so capping the dotted parts per line bounds the
// depth. The scan skips strings and comments, and does not count the dot of
// a number (digit.digit in a value, outside braces); a miscount can only
// refuse odd but valid TOML or leave the rest to toml++, never misparse.
constexpr int max_dots_per_line = 256;

bool too_many_dots(std::string_view t, const char *source_name, bl_error *err)
{
    enum { normal, basic, literal, ml_basic, ml_literal, comment } state = normal;
    uint32_t line = 1, column = 1;
    int dots = 0, braces = 0, arrays = 0; // arrays: open '[' of values, which may span lines
    bool seen_eq = false;
    auto at = [&](size_t i, std::string_view what) { return t.substr(i, what.size()) == what; };
    auto digit = [&](size_t i) { return i < t.size() && t[i] >= '0' && t[i] <= '9'; };
    for (size_t i = 0; i < t.size(); i++, column++) {
        char c = t[i];
        if (c == '\n') {
            if (state == basic || state == literal || state == comment)
                state = normal;
            line++;
            column = 0;
            dots = braces = 0;
            seen_eq = arrays > 0; // a continuation line of an array is a value
            continue;
        }
        switch (state) {
        case normal:
            if (c == '#')
                state = comment;
            else if (at(i, "\"\"\"")) {
                state = ml_basic;
                i += 2;
                column += 2;
            } else if (at(i, "'''")) {
                state = ml_literal;
                i += 2;
                column += 2;
            } else if (c == '"')
                state = basic;
            else if (c == '\'')
                state = literal;
            else if (c == '=')
                seen_eq = true;
            else if (c == '[' && seen_eq)
                arrays++;
            else if (c == ']' && arrays > 0)
                arrays--;
            else if (c == '{')
                braces++;
            else if (c == '}')
                braces--;
            else if (c == '.') {
                bool number = seen_eq && braces <= 0 && i > 0 && digit(i - 1) && digit(i + 1);
                if (!number && ++dots > max_dots_per_line) {
                    bl_fail(err, BL_ERR_FORMAT, "%s:%u:%u: more than %d dotted key parts on one line",
                            source_name, (unsigned)line, (unsigned)column, max_dots_per_line);
                    return true;
                }
            }
            break;
        case basic:
        case ml_basic:
            if (c == '\\' && i + 1 < t.size() && t[i + 1] != '\n') {
                i++; // an escaped character cannot close the string
                column++;
            } else if (state == basic && c == '"')
                state = normal;
            else if (state == ml_basic && at(i, "\"\"\"")) {
                state = normal;
                i += 2;
                column += 2;
            }
            break;
        case literal:
            if (c == '\'')
                state = normal;
            break;
        case ml_literal:
            if (at(i, "'''")) {
                state = normal;
                i += 2;
                column += 2;
            }
            break;
        case comment:
            break;
        }
    }
    return false;
}

bl_status parse_impl(std::string_view text, const char *source_name, bl_toml_doc **out,
                     bl_error *err)
{
    if (too_many_dots(text, source_name, err))
        return BL_ERR_FORMAT;
    try {
#if TOML_EXCEPTIONS
        toml::table root;
        try {
            root = toml::parse(text, std::string_view(source_name));
        } catch (const toml::parse_error &e) {
            const auto &b = e.source().begin;
            return bl_fail(err, BL_ERR_FORMAT, "%s:%u:%u: %s", source_name, (unsigned)b.line,
                           (unsigned)b.column, one_line(e.description()).c_str());
        }
#else
        toml::parse_result result = toml::parse(text, std::string_view(source_name));
        if (!result) {
            const auto &e = result.error();
            const auto &b = e.source().begin;
            return bl_fail(err, BL_ERR_FORMAT, "%s:%u:%u: %s", source_name, (unsigned)b.line,
                           (unsigned)b.column, one_line(e.description()).c_str());
        }
        toml::table root = std::move(result).table();
#endif
        auto doc = std::make_unique<bl_toml_doc>();
        try {
            doc->root = convert(root, 0);
        } catch (const depth_error &e) {
            return bl_fail(err, BL_ERR_FORMAT, "%s:%u:%u: tables and arrays nested deeper than %d levels",
                           source_name, (unsigned)e.line, (unsigned)e.column, max_depth);
        }
        *out = doc.release();
        return BL_OK;
    } catch (const std::bad_alloc &) {
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory while parsing TOML", source_name);
    } catch (const std::exception &e) {
        return bl_fail(err, BL_ERR_INTERNAL, "%s: TOML parser failed: %s", source_name,
                       one_line(e.what()).c_str());
    } catch (...) {
        return bl_fail(err, BL_ERR_INTERNAL, "%s: TOML parser failed", source_name);
    }
}

const bl_toml_node *child(const bl_toml_node *n, bl_toml_type type, size_t i)
{
    if (!n || n->type != type || i >= n->children.size())
        return nullptr;
    return n->children[i].get();
}

}  // namespace

extern "C" {

bl_status bl_toml_parse_text(const char *text, size_t len, const char *source_name,
                             bl_toml_doc **out, bl_error *err)
{
    *out = nullptr;
    if (!source_name)
        source_name = "(string)";
    if (len > BL_TOML_MAX_BYTES)
        return bl_fail(err, BL_ERR_FORMAT, "%s: %zu bytes is larger than the %zu-byte limit",
                       source_name, len, BL_TOML_MAX_BYTES);
    return parse_impl(std::string_view(text ? text : "", text ? len : 0), source_name, out, err);
}

bl_status bl_toml_parse_file(const char *path, bl_toml_doc **out, bl_error *err)
{
    *out = nullptr;
    // Read the file here rather than with toml::parse_file, so that a missing
    // or unreadable file gets the system's reason, a FIFO or device is
    // refused (bl_open_regular) and size is capped first.
    char *buf = nullptr;
    size_t n = 0;
    bl_status st = bl_read_small(path, BL_TOML_MAX_BYTES, &buf, &n, err);
    if (st)
        return st;
    st = parse_impl(std::string_view(buf, n), path, out, err);
    std::free(buf);
    return st;
}

void bl_toml_destroy(bl_toml_doc *doc)
{
    delete doc;
}

const bl_toml_node *bl_toml_root(const bl_toml_doc *doc)
{
    return doc ? doc->root.get() : nullptr;
}

bl_toml_type bl_toml_type_of(const bl_toml_node *n)
{
    return n ? n->type : BL_TOML_TABLE;
}

const char *bl_toml_type_name(bl_toml_type type)
{
    switch (type) {
    case BL_TOML_TABLE: return "table";
    case BL_TOML_ARRAY: return "array";
    case BL_TOML_STRING: return "string";
    case BL_TOML_INTEGER: return "integer";
    case BL_TOML_FLOAT: return "float";
    case BL_TOML_BOOLEAN: return "boolean";
    case BL_TOML_DATE: return "date";
    case BL_TOML_TIME: return "time";
    case BL_TOML_DATE_TIME: return "date-time";
    }
    return "unknown";
}

uint32_t bl_toml_line(const bl_toml_node *n)
{
    return n ? n->line : 0;
}

uint32_t bl_toml_column(const bl_toml_node *n)
{
    return n ? n->column : 0;
}

size_t bl_toml_table_size(const bl_toml_node *n)
{
    return n && n->type == BL_TOML_TABLE ? n->keys.size() : 0;
}

const char *bl_toml_table_key(const bl_toml_node *n, size_t i, size_t *len)
{
    if (!n || n->type != BL_TOML_TABLE || i >= n->keys.size())
        return nullptr;
    if (len)
        *len = n->keys[i].size();
    return n->keys[i].c_str();
}

const bl_toml_node *bl_toml_table_value(const bl_toml_node *n, size_t i)
{
    return child(n, BL_TOML_TABLE, i);
}

const bl_toml_node *bl_toml_table_get(const bl_toml_node *n, const char *key)
{
    if (!n || n->type != BL_TOML_TABLE || !key)
        return nullptr;
    std::string_view k(key);
    for (size_t i = 0; i < n->keys.size(); i++)
        if (n->keys[i] == k)
            return n->children[i].get();
    return nullptr;
}

size_t bl_toml_array_size(const bl_toml_node *n)
{
    return n && n->type == BL_TOML_ARRAY ? n->children.size() : 0;
}

const bl_toml_node *bl_toml_array_at(const bl_toml_node *n, size_t i)
{
    return child(n, BL_TOML_ARRAY, i);
}

int bl_toml_get_string(const bl_toml_node *n, const char **out, size_t *len)
{
    if (!n || n->type != BL_TOML_STRING)
        return 0;
    *out = n->text.c_str();
    if (len)
        *len = n->text.size();
    return 1;
}

int bl_toml_get_int(const bl_toml_node *n, int64_t *out)
{
    if (!n || n->type != BL_TOML_INTEGER)
        return 0;
    *out = n->integer;
    return 1;
}

int bl_toml_get_double(const bl_toml_node *n, double *out)
{
    if (!n)
        return 0;
    if (n->type == BL_TOML_FLOAT) {
        *out = n->number;
        return 1;
    }
    if (n->type == BL_TOML_INTEGER) {
        *out = static_cast<double>(n->integer);
        return 1;
    }
    return 0;
}

int bl_toml_get_bool(const bl_toml_node *n, int *out)
{
    if (!n || n->type != BL_TOML_BOOLEAN)
        return 0;
    *out = n->boolean ? 1 : 0;
    return 1;
}

int bl_toml_get_datetime(const bl_toml_node *n, const char **out)
{
    if (!n || (n->type != BL_TOML_DATE && n->type != BL_TOML_TIME && n->type != BL_TOML_DATE_TIME))
        return 0;
    *out = n->text.c_str();
    return 1;
}

}  // extern "C"

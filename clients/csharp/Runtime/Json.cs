// JSON for the client, with nothing Unity lacks: a parser to a tree of
// Dictionary<string, object>, List<object>, string, long, double, bool and null, and a
// writer of the same. An integer literal is read as a long (exact over a score's whole
// 64-bit range), never through a double; one past a long's range is a double.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Photofinish
{
    /// <summary>The client's JSON: parse, write, and the readers the generated types use.</summary>
    public static class Json
    {
        /// <summary>Parses JSON text into the tree described above.</summary>
        public static object Parse(string text)
        {
            var p = new Parser(text);
            var v = p.Value();
            p.Space();
            if (p.Pos != text.Length) throw p.Fail("trailing characters");
            return v;
        }

        /// <summary>Writes a tree (and longs, doubles, strings, bools, nulls) as JSON.</summary>
        public static string Write(object value)
        {
            var sb = new StringBuilder();
            WriteValue(sb, value);
            return sb.ToString();
        }

        private static void WriteValue(StringBuilder sb, object v)
        {
            if (v == null)
            {
                sb.Append("null");
                return;
            }
            if (v is string)
            {
                WriteString(sb, (string)v);
                return;
            }
            if (v is bool)
            {
                sb.Append((bool)v ? "true" : "false");
                return;
            }
            if (v is long || v is int || v is short || v is sbyte || v is byte || v is ushort || v is uint)
            {
                sb.Append(Convert.ToInt64(v).ToString(CultureInfo.InvariantCulture));
                return;
            }
            if (v is ulong)
            {
                sb.Append(((ulong)v).ToString(CultureInfo.InvariantCulture));
                return;
            }
            if (v is double || v is float || v is decimal)
            {
                var d = Convert.ToDouble(v, CultureInfo.InvariantCulture);
                if (double.IsNaN(d) || double.IsInfinity(d)) throw new ArgumentException("JSON has no NaN or infinity");
                sb.Append(d.ToString("R", CultureInfo.InvariantCulture));
                return;
            }
            // Any dictionary (Dictionary<string, int> as well as <string, object>) is an object.
            var o = v as System.Collections.IDictionary;
            if (o != null)
            {
                sb.Append('{');
                var first = true;
                foreach (System.Collections.DictionaryEntry kv in o)
                {
                    if (!first) sb.Append(',');
                    first = false;
                    WriteString(sb, Convert.ToString(kv.Key, CultureInfo.InvariantCulture));
                    sb.Append(':');
                    WriteValue(sb, kv.Value);
                }
                sb.Append('}');
                return;
            }
            var list = v as System.Collections.IEnumerable;
            if (list != null)
            {
                sb.Append('[');
                var firstItem = true;
                foreach (var item in list)
                {
                    if (!firstItem) sb.Append(',');
                    firstItem = false;
                    WriteValue(sb, item);
                }
                sb.Append(']');
                return;
            }
            throw new ArgumentException("cannot write a " + v.GetType().Name + " as JSON");
        }

        private static void WriteString(StringBuilder sb, string s)
        {
            sb.Append('"');
            foreach (var c in s)
            {
                switch (c)
                {
                    case '"': sb.Append("\\\""); break;
                    case '\\': sb.Append("\\\\"); break;
                    case '\n': sb.Append("\\n"); break;
                    case '\r': sb.Append("\\r"); break;
                    case '\t': sb.Append("\\t"); break;
                    default:
                        if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4"));
                        else sb.Append(c);
                        break;
                }
            }
            sb.Append('"');
        }

        // ----- Readers of the generated types -----

        internal static object Get(Dictionary<string, object> o, string key)
        {
            object v;
            return o.TryGetValue(key, out v) ? v : null;
        }

        internal static void Put(Dictionary<string, object> d, string key, object value)
        {
            if (value != null) d[key] = value;
        }

        internal static long ToLong(object v)
        {
            var n = ToLongOrNull(v);
            if (n == null) throw new FormatException("expected an integer, got " + Describe(v));
            return n.Value;
        }

        internal static long? ToLongOrNull(object v)
        {
            if (v == null) return null;
            if (v is long) return (long)v;
            if (v is double && (double)v == Math.Floor((double)v) && Math.Abs((double)v) < 9.2e18) return (long)(double)v;
            long p;
            if (v is string && long.TryParse((string)v, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out p)) return p;
            throw new FormatException("expected an integer, got " + Describe(v));
        }

        internal static bool ToBool(object v)
        {
            var b = ToBoolOrNull(v);
            if (b == null) throw new FormatException("expected a boolean, got " + Describe(v));
            return b.Value;
        }

        internal static bool? ToBoolOrNull(object v)
        {
            if (v == null) return null;
            if (v is bool) return (bool)v;
            throw new FormatException("expected a boolean, got " + Describe(v));
        }

        internal static double ToDouble(object v)
        {
            var d = ToDoubleOrNull(v);
            if (d == null) throw new FormatException("expected a number, got " + Describe(v));
            return d.Value;
        }

        internal static double? ToDoubleOrNull(object v)
        {
            if (v == null) return null;
            if (v is double) return (double)v;
            if (v is long) return (long)v;
            throw new FormatException("expected a number, got " + Describe(v));
        }

        internal static string ToStr(object v)
        {
            if (v == null) return null;
            if (v is string) return (string)v;
            throw new FormatException("expected a string, got " + Describe(v));
        }

        internal static Dictionary<string, object> ToObject(object v)
        {
            return v as Dictionary<string, object>;
        }

        internal static List<T> ToList<T>(object v, Func<object, T> item)
        {
            var list = v as List<object>;
            if (list == null) return null;
            var out_ = new List<T>(list.Count);
            foreach (var x in list) out_.Add(item(x));
            return out_;
        }

        internal static Dictionary<string, T> ToMap<T>(object v, Func<object, T> item)
        {
            var o = v as Dictionary<string, object>;
            if (o == null) return null;
            var out_ = new Dictionary<string, T>(o.Count);
            foreach (var kv in o) out_[kv.Key] = item(kv.Value);
            return out_;
        }

        internal static List<object> FromList<T>(List<T> list, Func<T, object> item)
        {
            if (list == null) return null;
            var out_ = new List<object>(list.Count);
            foreach (var x in list) out_.Add(item(x));
            return out_;
        }

        internal static Dictionary<string, object> FromMap<T>(Dictionary<string, T> map, Func<T, object> item)
        {
            if (map == null) return null;
            var out_ = new Dictionary<string, object>(map.Count);
            foreach (var kv in map) out_[kv.Key] = item(kv.Value);
            return out_;
        }

        private static string Describe(object v)
        {
            return v == null ? "null" : v.GetType().Name + " " + v;
        }

        private sealed class Parser
        {
            private readonly string s;
            internal int Pos;

            internal Parser(string text)
            {
                s = text;
            }

            internal FormatException Fail(string what)
            {
                return new FormatException("invalid JSON at " + Pos + ": " + what);
            }

            internal void Space()
            {
                while (Pos < s.Length && (s[Pos] == ' ' || s[Pos] == '\n' || s[Pos] == '\r' || s[Pos] == '\t')) Pos++;
            }

            internal object Value()
            {
                Space();
                if (Pos >= s.Length) throw Fail("unexpected end");
                var c = s[Pos];
                if (c == '{') return Object();
                if (c == '[') return Array();
                if (c == '"') return String();
                if (c == '-' || (c >= '0' && c <= '9')) return Number();
                if (Word("true")) return true;
                if (Word("false")) return false;
                if (Word("null")) return null;
                throw Fail("unexpected '" + c + "'");
            }

            private bool Word(string w)
            {
                if (string.CompareOrdinal(s, Pos, w, 0, w.Length) != 0) return false;
                Pos += w.Length;
                return true;
            }

            private Dictionary<string, object> Object()
            {
                var o = new Dictionary<string, object>();
                Pos++;
                Space();
                if (Pos < s.Length && s[Pos] == '}')
                {
                    Pos++;
                    return o;
                }
                while (true)
                {
                    Space();
                    if (Pos >= s.Length || s[Pos] != '"') throw Fail("expected a key");
                    var key = String();
                    Space();
                    if (Pos >= s.Length || s[Pos] != ':') throw Fail("expected ':'");
                    Pos++;
                    o[key] = Value();
                    Space();
                    if (Pos >= s.Length) throw Fail("unexpected end");
                    var c = s[Pos++];
                    if (c == '}') return o;
                    if (c != ',') throw Fail("expected ',' or '}'");
                }
            }

            private List<object> Array()
            {
                var a = new List<object>();
                Pos++;
                Space();
                if (Pos < s.Length && s[Pos] == ']')
                {
                    Pos++;
                    return a;
                }
                while (true)
                {
                    a.Add(Value());
                    Space();
                    if (Pos >= s.Length) throw Fail("unexpected end");
                    var c = s[Pos++];
                    if (c == ']') return a;
                    if (c != ',') throw Fail("expected ',' or ']'");
                }
            }

            private string String()
            {
                var sb = new StringBuilder();
                Pos++;
                while (Pos < s.Length)
                {
                    var c = s[Pos++];
                    if (c == '"') return sb.ToString();
                    if (c != '\\')
                    {
                        sb.Append(c);
                        continue;
                    }
                    if (Pos >= s.Length) break;
                    var e = s[Pos++];
                    switch (e)
                    {
                        case '"': sb.Append('"'); break;
                        case '\\': sb.Append('\\'); break;
                        case '/': sb.Append('/'); break;
                        case 'b': sb.Append('\b'); break;
                        case 'f': sb.Append('\f'); break;
                        case 'n': sb.Append('\n'); break;
                        case 'r': sb.Append('\r'); break;
                        case 't': sb.Append('\t'); break;
                        case 'u':
                            if (Pos + 4 > s.Length) throw Fail("short \\u escape");
                            sb.Append((char)int.Parse(s.Substring(Pos, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture));
                            Pos += 4;
                            break;
                        default:
                            throw Fail("bad escape");
                    }
                }
                throw Fail("unterminated string");
            }

            private object Number()
            {
                var start = Pos;
                if (s[Pos] == '-') Pos++;
                var integer = true;
                while (Pos < s.Length)
                {
                    var c = s[Pos];
                    if (c >= '0' && c <= '9') Pos++;
                    else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')
                    {
                        integer = false;
                        Pos++;
                    }
                    else break;
                }
                var text = s.Substring(start, Pos - start);
                long l;
                if (integer && long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out l)) return l;
                double d;
                if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out d)) return d;
                throw Fail("bad number " + text);
            }
        }
    }
}

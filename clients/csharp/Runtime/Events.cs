// A board's live events (GET /v1/boards/{board}/events, docs/console-events.md), read from
// the HTTP response as it streams, with the token in a header. The listener reconnects by
// itself: after a dropped connection, a 503 or the server's end of the stream it waits and
// asks again with Last-Event-ID, so the server replays what was missed or sends resync.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net.Http;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Photofinish
{
    /// <summary>
    /// An event: score (Member, Score, Scores, Rank, ReachedAt, Period, and Partition,
    /// PartitionRank and Team when the member is in them), remove (Member, Period), reset
    /// (Period, Previous), or resync (events were missed: reload).
    /// </summary>
    public sealed class BoardEvent
    {
        public string Type { get; set; }
        public string Id { get; set; }
        public string Member { get; set; }
        public long? Score { get; set; }
        public Dictionary<string, long> Scores { get; set; }
        public long? Rank { get; set; }
        public string ReachedAt { get; set; }
        public string Period { get; set; }
        public string Previous { get; set; }
        public string Partition { get; set; }
        public long? PartitionRank { get; set; }
        public string Team { get; set; }

        internal static BoardEvent Of(string type, string id, string data)
        {
            var o = (string.IsNullOrEmpty(data) ? null : Json.Parse(data) as Dictionary<string, object>) ?? new Dictionary<string, object>();
            return new BoardEvent
            {
                Type = type,
                Id = id,
                Member = Json.ToStr(Json.Get(o, "member")),
                Score = Json.ToLongOrNull(Json.Get(o, "score")),
                Scores = Json.ToMap(Json.Get(o, "scores"), x => Json.ToLong(x)),
                Rank = Json.ToLongOrNull(Json.Get(o, "rank")),
                ReachedAt = Json.ToStr(Json.Get(o, "reached_at")),
                Period = Json.ToStr(Json.Get(o, "period")),
                Previous = Json.ToStr(Json.Get(o, "previous")),
                Partition = Json.ToStr(Json.Get(o, "partition")),
                PartitionRank = Json.ToLongOrNull(Json.Get(o, "partition_rank")),
                Team = Json.ToStr(Json.Get(o, "team")),
            };
        }
    }

    /// <summary>What to watch and from where.</summary>
    public sealed class EventsOptions
    {
        /// <summary>Only these members' events.</summary>
        public IEnumerable<string> Members { get; set; }

        /// <summary>Resume after this event id (the last one seen).</summary>
        public string LastEventId { get; set; }

        /// <summary>Only score events of this partition's members (docs/SPEC.md §17).</summary>
        public string Partition { get; set; }
    }

    public sealed partial class PhotofinishClient
    {
        /// <summary>
        /// Calls onEvent with each of the board's events until ct is cancelled, reconnecting
        /// after a drop or a 503 and resuming after the last event given. Another refusal
        /// (401, 403, 404) ends it with a PhotofinishException. onEvent runs on the
        /// SynchronizationContext ListenAsync was called on: in Unity, called from the main
        /// thread (as from Start), on the main thread, where it may touch the scene.
        /// </summary>
        public async Task ListenAsync(string board, Action<BoardEvent> onEvent, EventsOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            var last = o == null ? null : o.LastEventId;
            // One members= per name (a name may hold a comma), a lone name twice: one value
            // alone is split on commas by the server.
            var members = o == null || o.Members == null ? new List<string>() : o.Members.ToList();
            if (members.Count == 1) members.Add(members[0]);
            var query = members.Select(m => new KeyValuePair<string, string>("members", m)).ToList();
            if (o != null && o.Partition != null) query.Add(new KeyValuePair<string, string>("partition", o.Partition));
            var url = Url(Path("v1", "boards", board, "events"), query);
            // Events are handed to the context ListenAsync was called on (Unity's main thread
            // when called from it), in order; without one, on the reading thread.
            var context = SynchronizationContext.Current;
            Action<BoardEvent> deliver = e =>
            {
                if (context == null) onEvent(e);
                else context.Post(_ => onEvent(e), null);
            };
            var failures = 0;
            int? serverRetryMs = null;
            while (!ct.IsCancellationRequested)
            {
                int? retryAfter = null;
                try
                {
                    var req = new HttpRequestMessage(HttpMethod.Get, url);
                    req.Headers.TryAddWithoutValidation("Accept", "text/event-stream");
                    if (!string.IsNullOrEmpty(options.Token)) req.Headers.TryAddWithoutValidation("Authorization", "Bearer " + options.Token);
                    if (last != null) req.Headers.TryAddWithoutValidation("Last-Event-ID", last);
                    using (req)
                    using (var res = await http.SendAsync(req, HttpCompletionOption.ResponseHeadersRead, ct).ConfigureAwait(false))
                    {
                        var status = (int)res.StatusCode;
                        if (status < 200 || status >= 300)
                        {
                            var text = await res.Content.ReadAsStringAsync().ConfigureAwait(false);
                            retryAfter = RetryAfterOf(res);
                            if (status != 503) throw Refusal(status, text, retryAfter);
                        }
                        else
                        {
                            using (var stream = await res.Content.ReadAsStreamAsync().ConfigureAwait(false))
                            using (ct.Register(() => stream.Dispose()))
                            {
                                var reader = new StreamReader(stream, Encoding.UTF8);
                                var frame = new Frame();
                                string line;
                                while ((line = await reader.ReadLineAsync().ConfigureAwait(false)) != null)
                                {
                                    var e = frame.Take(line, ref last, ref serverRetryMs);
                                    if (e == null) continue;
                                    failures = 0;
                                    deliver(e);
                                }
                            }
                        }
                    }
                }
                catch (PhotofinishException)
                {
                    throw;
                }
                catch (Exception e)
                {
                    if (ct.IsCancellationRequested) return;
                    if (!(e is HttpRequestException || e is IOException || e is ObjectDisposedException || e is OperationCanceledException)) throw;
                }
                if (ct.IsCancellationRequested) return;
                failures++;
                var wait = retryAfter != null || serverRetryMs == null
                    ? Backoff(Math.Min(failures, 10), retryAfter)
                    : TimeSpan.FromMilliseconds(serverRetryMs.Value);
                try
                {
                    await Task.Delay(wait, ct).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
            }
        }

        /// <summary>The lines of one event as they arrive (the SSE format: fields, then a blank line).</summary>
        private sealed class Frame
        {
            private string type = "message";
            private StringBuilder data;
            private string id;

            internal BoardEvent Take(string line, ref string last, ref int? retryMs)
            {
                if (line.Length == 0)
                {
                    BoardEvent e = null;
                    if (id != null) last = id;
                    if (data != null && (type == "score" || type == "remove" || type == "reset" || type == "resync"))
                    {
                        e = BoardEvent.Of(type, id ?? last, data.ToString());
                    }
                    type = "message";
                    data = null;
                    id = null;
                    return e;
                }
                if (line[0] == ':') return null;
                var colon = line.IndexOf(':');
                var field = colon < 0 ? line : line.Substring(0, colon);
                var value = colon < 0 ? "" : line.Substring(colon + 1);
                if (value.StartsWith(" ", StringComparison.Ordinal)) value = value.Substring(1);
                int ms;
                switch (field)
                {
                    case "event": type = value; break;
                    case "data":
                        if (data == null) data = new StringBuilder(value);
                        else data.Append('\n').Append(value);
                        break;
                    case "id": id = value; break;
                    case "retry":
                        if (int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out ms)) retryMs = ms;
                        break;
                }
                return null;
            }
        }
    }
}

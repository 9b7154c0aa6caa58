// The Photofinish client for Unity and .NET: one async method per call of the HTTP API
// (docs/SPEC.md §3), typed with the server's own shapes (Schema.cs, generated from its
// OpenAPI document). It needs HttpClient and nothing Unity lacks.
//
// Rules every call follows (docs/clients.md):
// - Scores are long: exact over their whole 64-bit range, both ways.
// - A refusal is a PhotofinishException with the server's status and stable code.
// - Calls safe to repeat are retried on a network error, a 503 or a 429 (after the
//   server's Retry-After when it gives one). Reads are safe; so are writes, because each
//   submit, batch, board create and member delete carries an Idempotency-Key (made here
//   unless the caller gives one) that the server answers a retry with the first answer
//   for, without applying it twice. An import is never retried.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Net.Http;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Photofinish
{
    /// <summary>How to reach the server, and how hard to try.</summary>
    public sealed class ClientOptions
    {
        /// <summary>The server's URL, e.g. https://scores.example.com (a path prefix is kept).</summary>
        public string BaseUrl { get; set; }

        /// <summary>An API key (pf_…) or a player's token; none on an open server.</summary>
        public string Token { get; set; }

        /// <summary>Tries after the first, for calls safe to repeat. Default 3.</summary>
        public int Retries { get; set; } = 3;

        /// <summary>The wait before the first retry, doubled for each next one (plus jitter).</summary>
        public TimeSpan RetryDelay { get; set; } = TimeSpan.FromMilliseconds(200);

        /// <summary>The longest wait between tries, whatever Retry-After says.</summary>
        public TimeSpan MaxRetryDelay { get; set; } = TimeSpan.FromSeconds(10);

        /// <summary>Each try's time limit.</summary>
        public TimeSpan Timeout { get; set; } = TimeSpan.FromSeconds(10);

        /// <summary>The handler under the HttpClient (default: a new HttpClientHandler).</summary>
        public HttpMessageHandler Handler { get; set; }
    }

    /// <summary>A read's period (current, previous or an id), rank style (ordinal, competition, dense)
    /// and the partition it is of (docs/SPEC.md §17; null for the whole board).</summary>
    public class ReadOptions
    {
        public string Period { get; set; }
        public string Ranking { get; set; }
        public string Partition { get; set; }
    }

    /// <summary>A page: Offset from the top (default 0), Limit rows (default 10, at most 1000).</summary>
    public class PageOptions : ReadOptions
    {
        public long? Offset { get; set; }
        public long? Limit { get; set; }
    }

    /// <summary>A board created, or found as it was (Created false).</summary>
    public sealed class CreatedBoard
    {
        public bool Created { get; set; }
        public BoardView Board { get; set; }
    }

    /// <summary>One entry of a batch's answer: its result, or its error in its place.</summary>
    public sealed class BatchItem
    {
        public WriteResult Result { get; set; }
        public ErrorDetail Error { get; set; }
    }

    /// <summary>A Photofinish server, as one credential sees it.</summary>
    public sealed partial class PhotofinishClient : IDisposable
    {
        private readonly HttpClient http;
        private readonly bool ownsHttp;
        private readonly ClientOptions options;
        private readonly string baseUrl;
        private static readonly Random Jitter = new Random();

        public PhotofinishClient(ClientOptions options)
            : this(options, new HttpClient(options.Handler ?? new HttpClientHandler()) { Timeout = System.Threading.Timeout.InfiniteTimeSpan }, true)
        {
        }

        private PhotofinishClient(ClientOptions options, HttpClient http, bool ownsHttp)
        {
            if (string.IsNullOrEmpty(options.BaseUrl)) throw new ArgumentException("BaseUrl is required");
            this.options = options;
            this.http = http;
            this.ownsHttp = ownsHttp;
            baseUrl = options.BaseUrl.TrimEnd('/');
        }

        /// <summary>The same server with another credential (a player's token after login), sharing connections.</summary>
        public PhotofinishClient WithToken(string token)
        {
            var o = new ClientOptions
            {
                BaseUrl = options.BaseUrl,
                Token = token,
                Retries = options.Retries,
                RetryDelay = options.RetryDelay,
                MaxRetryDelay = options.MaxRetryDelay,
                Timeout = options.Timeout,
            };
            return new PhotofinishClient(o, http, false);
        }

        public void Dispose()
        {
            if (ownsHttp) http.Dispose();
        }

        /// <summary>A new Idempotency-Key: 128 random bits.</summary>
        public static string NewIdempotencyKey()
        {
            return Guid.NewGuid().ToString();
        }

        // ----- Scores -----

        /// <summary>Submits a member's score: Score or Scores (by column), and Op, Metadata, At or Period if wanted.</summary>
        public async Task<WriteResult> SubmitAsync(string board, string member, WriteBody write, string idempotencyKey = null, CancellationToken ct = default(CancellationToken))
        {
            var body = write.ToJson();
            body["member"] = member;
            return WriteResult.FromJson(await JsonAsync(Keyed(new Call("POST", Path("v1", "boards", board, "scores")) { Body = body }, idempotencyKey), ct));
        }

        /// <summary>Submits a score with the board's operator.</summary>
        public Task<WriteResult> SubmitAsync(string board, string member, long score, CancellationToken ct = default(CancellationToken))
        {
            return SubmitAsync(board, member, new WriteBody { Score = score }, null, ct);
        }

        /// <summary>Submits up to 1000 writes in order; each entry answers a result or its own error.</summary>
        public async Task<List<BatchItem>> SubmitBatchAsync(string board, IEnumerable<WriteBody> entries, string idempotencyKey = null, CancellationToken ct = default(CancellationToken))
        {
            var body = new Dictionary<string, object> { { "entries", entries.Select(e => (object)e.ToJson()).ToList() } };
            var answer = BatchResult.FromJson(await JsonAsync(Keyed(new Call("POST", Path("v1", "boards", board, "scores:batch")) { Body = body }, idempotencyKey), ct));
            return answer.Results.Select(r => r.ContainsKey("error")
                ? new BatchItem { Error = ErrorDetail.FromJson(Json.Get(r, "error")) }
                : new BatchItem { Result = WriteResult.FromJson(r) }).ToList();
        }

        /// <summary>Joins the member to the board's current period (tournaments that require it, cohorts).</summary>
        public async Task<JoinView> JoinAsync(string board, string member, CancellationToken ct = default(CancellationToken))
        {
            return JoinView.FromJson(await JsonAsync(new Call("POST", Path("v1", "boards", board, "members", member, "join")) { Retry = true }, ct));
        }

        // ----- Reads -----

        /// <summary>A member's entry: score, rank, total, and its cohort and tier where the board has them.</summary>
        public async Task<MemberView> MemberAsync(string board, string member, ReadOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            return MemberView.FromJson(await GetAsync(Path("v1", "boards", board, "members", member), Read(o), ct));
        }

        /// <summary>A page of the board, from the top.</summary>
        public async Task<EntriesPage> EntriesAsync(string board, PageOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            return EntriesPage.FromJson(await GetAsync(Path("v1", "boards", board, "entries"), Page(o), ct));
        }

        /// <summary>The member's neighbours: before rows above it and after below.</summary>
        public async Task<EntriesPage> AroundAsync(string board, string member, int before = 5, int after = 5, ReadOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            var q = Read(o);
            q["before"] = before.ToString(CultureInfo.InvariantCulture);
            q["after"] = after.ToString(CultureInfo.InvariantCulture);
            return EntriesPage.FromJson(await GetAsync(Path("v1", "boards", board, "members", member, "around"), q, ct));
        }

        /// <summary>Up to 1000 named members at once (friends' scores); unranked names come back in Missing.</summary>
        public async Task<MembersQueryView> QueryMembersAsync(string board, IEnumerable<string> members, ReadOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            var body = new MembersQueryBody { Members = members.ToList(), Period = o == null ? null : o.Period, Ranking = o == null ? null : o.Ranking };
            return MembersQueryView.FromJson(await JsonAsync(new Call("POST", Path("v1", "boards", board, "members:query")) { Body = body.ToJson(), Retry = true }, ct));
        }

        /// <summary>The rank a score would have; on a board of several columns, give every column's in order.</summary>
        public async Task<ScoreRankView> RankOfScoreAsync(string board, long[] scores, ReadOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            var q = Read(o);
            if (scores.Length == 1) q["score"] = scores[0].ToString(CultureInfo.InvariantCulture);
            else q["scores"] = string.Join(",", scores.Select(s => s.ToString(CultureInfo.InvariantCulture)));
            return ScoreRankView.FromJson(await GetAsync(Path("v1", "boards", board, "rank"), q, ct));
        }

        /// <summary>The rank a score would have.</summary>
        public Task<ScoreRankView> RankOfScoreAsync(string board, long score, ReadOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            return RankOfScoreAsync(board, new[] { score }, o, ct);
        }

        /// <summary>The scores at ranks, and at the top percentages.</summary>
        public async Task<ThresholdsView> ThresholdsAsync(string board, IEnumerable<long> ranks = null, IEnumerable<double> topPercent = null, string period = null, CancellationToken ct = default(CancellationToken))
        {
            var q = new Dictionary<string, string>();
            if (period != null) q["period"] = period;
            if (ranks != null) q["ranks"] = string.Join(",", ranks.Select(r => r.ToString(CultureInfo.InvariantCulture)));
            if (topPercent != null) q["top_percent"] = string.Join(",", topPercent.Select(p => p.ToString("R", CultureInfo.InvariantCulture)));
            return ThresholdsView.FromJson(await GetAsync(Path("v1", "boards", board, "thresholds"), q, ct));
        }

        /// <summary>The member on several boards (every board it is on, when boards is null).</summary>
        public async Task<MemberBoardsView> MemberBoardsAsync(string member, IEnumerable<string> boards = null, string ranking = null, CancellationToken ct = default(CancellationToken))
        {
            var q = new Dictionary<string, string>();
            if (boards != null) q["boards"] = string.Join(",", boards);
            if (ranking != null) q["ranking"] = ranking;
            return MemberBoardsView.FromJson(await GetAsync(Path("v1", "members", member), q, ct));
        }

        /// <summary>The member's cohort: its standings (docs/SPEC.md §14).</summary>
        public async Task<CohortView> CohortAsync(string board, string member, ReadOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            return CohortView.FromJson(await GetAsync(Path("v1", "boards", board, "members", member, "cohort"), Read(o), ct));
        }

        /// <summary>The board's cohorts (of one tier on a league).</summary>
        public async Task<CohortListView> CohortsAsync(string board, string tier = null, PageOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            var q = Page(o);
            if (tier != null) q["tier"] = tier;
            return CohortListView.FromJson(await GetAsync(Path("v1", "boards", board, "cohorts"), q, ct));
        }

        /// <summary>One cohort's standings.</summary>
        public async Task<CohortView> CohortEntriesAsync(string board, long cohort, string tier = null, PageOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            var q = Page(o);
            if (tier != null) q["tier"] = tier;
            return CohortView.FromJson(await GetAsync(Path("v1", "boards", board, "cohorts", cohort.ToString(CultureInfo.InvariantCulture), "entries"), q, ct));
        }

        /// <summary>The period's partitions, sorted by key, each with its members (docs/SPEC.md §17).</summary>
        public async Task<PartitionListView> PartitionsAsync(string board, PageOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            return PartitionListView.FromJson(await GetAsync(Path("v1", "boards", board, "partitions"), Page(o), ct));
        }

        /// <summary>The period's teams in rank order, by the sum of their members' scores (docs/SPEC.md §17).</summary>
        public async Task<TeamListView> TeamsAsync(string board, PageOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            return TeamListView.FromJson(await GetAsync(Path("v1", "boards", board, "teams"), Page(o), ct));
        }

        /// <summary>One team: its rank and score, and a page of its members' contributions.</summary>
        public async Task<TeamDetailView> TeamAsync(string board, string team, PageOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            return TeamDetailView.FromJson(await GetAsync(Path("v1", "boards", board, "teams", team), Page(o), ct));
        }

        /// <summary>The member's league tier.</summary>
        public async Task<TierView> TierAsync(string board, string member, CancellationToken ct = default(CancellationToken))
        {
            return TierView.FromJson(await GetAsync(Path("v1", "boards", board, "members", member, "tier"), null, ct));
        }

        /// <summary>A period's grants (docs/SPEC.md §16): Granted is false before its close made them.</summary>
        public async Task<PeriodRewardsView> PeriodRewardsAsync(string board, string period, PageOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            return PeriodRewardsView.FromJson(await GetAsync(Path("v1", "boards", board, "periods", period, "rewards"), Page(o), ct));
        }

        /// <summary>The member's grants across the boards the caller may read (or boards), newest first;
        /// status: unclaimed, claimed, expired or all (null).</summary>
        public async Task<MemberRewardsView> MemberRewardsAsync(string member, string status = null, IEnumerable<string> boards = null, PageOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            var q = Page(o);
            if (status != null) q["status"] = status;
            if (boards != null) q["boards"] = string.Join(",", boards);
            return MemberRewardsView.FromJson(await GetAsync(Path("v1", "members", member, "rewards"), q, ct));
        }

        /// <summary>Claims the member's grant id, once: retried under one idempotency key, so a claim
        /// whose answer was lost answers again rather than already_claimed (whose exception carries
        /// the grant as it was claimed, <see cref="PhotofinishException.Grant"/>).</summary>
        public async Task<GrantView> ClaimAsync(string member, string id, string idempotencyKey = null, CancellationToken ct = default(CancellationToken))
        {
            var call = Keyed(new Call("POST", Path("v1", "members", member, "rewards", id, "claim")), idempotencyKey);
            return GrantView.FromJson(await JsonAsync(call, ct));
        }

        /// <summary>Everything held about the member on the boards this caller may read (its scores,
        /// seats and grants in every kept period), as one document: a player exports its own.</summary>
        public async Task<MemberExportView> ExportMemberAsync(string member, CancellationToken ct = default(CancellationToken))
        {
            return MemberExportView.FromJson(await GetAsync(Path("v1", "members", member, "export"), null, ct));
        }

        /// <summary>A closed league period's promotions and relegations.</summary>
        public async Task<MovesView> MovesAsync(string board, string period, PageOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            return MovesView.FromJson(await GetAsync(Path("v1", "boards", board, "periods", period, "moves"), Page(o), ct));
        }

        /// <summary>The board's settings and counts.</summary>
        public async Task<BoardView> BoardAsync(string board, CancellationToken ct = default(CancellationToken))
        {
            return BoardView.FromJson(await GetAsync(Path("v1", "boards", board), null, ct));
        }

        /// <summary>A page of the boards this credential may read, by name (limit default
        /// 100, at most 1000), with Total, how many it may read in all.</summary>
        public async Task<BoardList> BoardsAsync(long? offset = null, long? limit = null, CancellationToken ct = default(CancellationToken))
        {
            var q = new Dictionary<string, string>();
            if (offset.HasValue) q["offset"] = offset.Value.ToString(CultureInfo.InvariantCulture);
            if (limit.HasValue) q["limit"] = limit.Value.ToString(CultureInfo.InvariantCulture);
            return BoardList.FromJson(await GetAsync(Path("v1", "boards"), q, ct));
        }

        /// <summary>The board's retained periods.</summary>
        public async Task<PeriodList> PeriodsAsync(string board, CancellationToken ct = default(CancellationToken))
        {
            return PeriodList.FromJson(await GetAsync(Path("v1", "boards", board, "periods"), null, ct));
        }

        /// <summary>Whether the server is up (/healthz).</summary>
        public async Task<Health> HealthAsync(CancellationToken ct = default(CancellationToken))
        {
            return Health.FromJson(await GetAsync(Path("healthz"), null, ct));
        }

        // ----- Admin -----

        /// <summary>Creates the board, or finds it unchanged if it exists with this config (Created false).</summary>
        public async Task<CreatedBoard> CreateBoardAsync(string board, BoardConfigBody config = null, string idempotencyKey = null, CancellationToken ct = default(CancellationToken))
        {
            var call = Keyed(new Call("PUT", Path("v1", "boards", board)) { Body = (config ?? new BoardConfigBody()).ToJson() }, idempotencyKey);
            var answer = await SendAsync(call, ct);
            return new CreatedBoard { Created = answer.Status == 201, Board = BoardView.FromJson(Json.Parse(answer.Text)) };
        }

        /// <summary>Changes the board's changeable settings.</summary>
        public async Task<BoardView> PatchBoardAsync(string board, BoardPatchBody patch, CancellationToken ct = default(CancellationToken))
        {
            return BoardView.FromJson(await JsonAsync(new Call("PATCH", Path("v1", "boards", board)) { Body = patch.ToJson(), Retry = true }, ct));
        }

        /// <summary>Deletes the board and all its periods.</summary>
        public Task DeleteBoardAsync(string board, CancellationToken ct = default(CancellationToken))
        {
            return SendAsync(new Call("DELETE", Path("v1", "boards", board)), ct);
        }

        /// <summary>Removes a member from a period (the current one by default).</summary>
        public Task DeleteMemberAsync(string board, string member, string period = null, string idempotencyKey = null, CancellationToken ct = default(CancellationToken))
        {
            var q = new Dictionary<string, string>();
            if (period != null) q["period"] = period;
            return SendAsync(Keyed(new Call("DELETE", Path("v1", "boards", board, "members", member)) { Query = q }, idempotencyKey), ct);
        }

        /// <summary>Hides the member on the board from everyone but admins and itself (docs/SPEC.md §15).</summary>
        public Task HideAsync(string board, string member, CancellationToken ct = default(CancellationToken))
        {
            return SendAsync(new Call("POST", Path("v1", "boards", board, "members", member, "hide")) { Retry = true }, ct);
        }

        /// <summary>Shows a hidden member again.</summary>
        public Task UnhideAsync(string board, string member, CancellationToken ct = default(CancellationToken))
        {
            return SendAsync(new Call("POST", Path("v1", "boards", board, "members", member, "unhide")) { Retry = true }, ct);
        }

        /// <summary>Hides the member on every board, present and future.</summary>
        public Task HideEverywhereAsync(string member, CancellationToken ct = default(CancellationToken))
        {
            return SendAsync(new Call("POST", Path("v1", "members", member, "hide")) { Retry = true }, ct);
        }

        /// <summary>Erases the member from every board and kept period at once (an admin key covering
        /// every board): the audit log names it by an HMAC alone. Sent with an Idempotency-Key (made
        /// here when none is given), so a retry gets the first answer again.</summary>
        public async Task<ErasedView> EraseMemberAsync(string member, string idempotencyKey = null, CancellationToken ct = default(CancellationToken))
        {
            return ErasedView.FromJson(await JsonAsync(Keyed(new Call("DELETE", Path("v1", "members", member)), idempotencyKey), ct));
        }

        /// <summary>Undoes HideEverywhereAsync.</summary>
        public Task UnhideEverywhereAsync(string member, CancellationToken ct = default(CancellationToken))
        {
            return SendAsync(new Call("POST", Path("v1", "members", member, "unhide")) { Retry = true }, ct);
        }

        /// <summary>The board's hidden members.</summary>
        public async Task<HiddenView> HiddenAsync(string board, PageOptions o = null, CancellationToken ct = default(CancellationToken))
        {
            return HiddenView.FromJson(await GetAsync(Path("v1", "boards", board, "hidden"), Page(o), ct));
        }

        /// <summary>The audit log, newest first: of one board, since an instant (RFC 3339), up to limit.</summary>
        public async Task<AuditView> AuditAsync(string board = null, string since = null, long? limit = null, CancellationToken ct = default(CancellationToken))
        {
            var q = new Dictionary<string, string>();
            if (board != null) q["board"] = board;
            if (since != null) q["since"] = since;
            if (limit != null) q["limit"] = limit.Value.ToString(CultureInfo.InvariantCulture);
            return AuditView.FromJson(await GetAsync(Path("v1", "audit"), q, ct));
        }

        /// <summary>Fills an empty period with lines, all or nothing. Not retried.</summary>
        public async Task<ImportAnswer> ImportAsync(string board, IEnumerable<ImportLine> lines, string period = null, CancellationToken ct = default(CancellationToken))
        {
            var text = new StringBuilder();
            foreach (var l in lines) text.Append(Json.Write(l.ToJson())).Append('\n');
            var q = new Dictionary<string, string>();
            if (period != null) q["period"] = period;
            var call = new Call("POST", Path("v1", "boards", board, "import")) { Query = q, RawBody = text.ToString(), ContentType = "application/x-ndjson" };
            return ImportAnswer.FromJson(await JsonAsync(call, ct));
        }

        /// <summary>A period's entries in rank order, as an import takes them.</summary>
        public async Task<List<TransferLine>> ExportAsync(string board, string period = null, CancellationToken ct = default(CancellationToken))
        {
            var q = new Dictionary<string, string>();
            if (period != null) q["period"] = period;
            var answer = await SendAsync(new Call("GET", Path("v1", "boards", board, "export")) { Query = q, Retry = true }, ct);
            return answer.Text.Split('\n').Where(l => l.Length > 0).Select(l => TransferLine.FromJson(Json.Parse(l))).ToList();
        }

        // ----- Plumbing -----

        private sealed class Call
        {
            internal readonly string Method;
            internal readonly string PathText;
            internal Dictionary<string, string> Query;
            internal object Body;
            internal string RawBody;
            internal string ContentType;
            internal string IdempotencyKey;
            internal bool Retry;

            internal Call(string method, string path)
            {
                Method = method;
                PathText = path;
            }
        }

        private sealed class Answer
        {
            internal int Status;
            internal string Text;
        }

        private static string Path(params string[] segments)
        {
            foreach (var s in segments)
            {
                // A URL parser removes these as path steps, whatever their escaping.
                if (s == "." || s == "..") throw new ArgumentException("\"" + s + "\" cannot be a board or member name in a URL");
            }
            return string.Join("/", segments.Select(s => Uri.EscapeDataString(s).Replace("%3A", ":")));
        }

        private static Dictionary<string, string> Read(ReadOptions o)
        {
            var q = new Dictionary<string, string>();
            if (o != null && o.Period != null) q["period"] = o.Period;
            if (o != null && o.Ranking != null) q["ranking"] = o.Ranking;
            if (o != null && o.Partition != null) q["partition"] = o.Partition;
            return q;
        }

        private static Dictionary<string, string> Page(PageOptions o)
        {
            var q = Read(o);
            if (o != null && o.Offset != null) q["offset"] = o.Offset.Value.ToString(CultureInfo.InvariantCulture);
            if (o != null && o.Limit != null) q["limit"] = o.Limit.Value.ToString(CultureInfo.InvariantCulture);
            return q;
        }

        private static Call Keyed(Call call, string key)
        {
            call.IdempotencyKey = key ?? NewIdempotencyKey();
            call.Retry = true;
            return call;
        }

        private string Url(string path, Dictionary<string, string> query)
        {
            return Url(path, query == null ? null : query.Select(kv => new KeyValuePair<string, string>(kv.Key, kv.Value)));
        }

        private string Url(string path, IEnumerable<KeyValuePair<string, string>> query)
        {
            var url = baseUrl + "/" + path;
            var pairs = query == null ? new List<KeyValuePair<string, string>>() : query.ToList();
            if (pairs.Count > 0)
            {
                url += "?" + string.Join("&", pairs.Select(kv => Uri.EscapeDataString(kv.Key) + "=" + Uri.EscapeDataString(kv.Value)));
            }
            return url;
        }

        private Task<object> GetAsync(string path, Dictionary<string, string> query, CancellationToken ct)
        {
            return JsonAsync(new Call("GET", path) { Query = query, Retry = true }, ct);
        }

        private async Task<object> JsonAsync(Call call, CancellationToken ct)
        {
            var answer = await SendAsync(call, ct);
            return Json.Parse(answer.Text);
        }

        private HttpRequestMessage Request(Call call, string url)
        {
            var req = new HttpRequestMessage(new HttpMethod(call.Method), url);
            req.Headers.TryAddWithoutValidation("Accept", "application/json");
            if (!string.IsNullOrEmpty(options.Token)) req.Headers.TryAddWithoutValidation("Authorization", "Bearer " + options.Token);
            if (call.IdempotencyKey != null) req.Headers.TryAddWithoutValidation("Idempotency-Key", call.IdempotencyKey);
            if (call.RawBody != null) req.Content = new StringContent(call.RawBody, Encoding.UTF8, call.ContentType);
            else if (call.Body != null) req.Content = new StringContent(Json.Write(call.Body), Encoding.UTF8, "application/json");
            return req;
        }

        internal PhotofinishException Refusal(int status, string body, int? retryAfter)
        {
            var code = PhotofinishException.UnexpectedAnswer;
            var message = "HTTP " + status;
            GrantView grant = null;
            try
            {
                var e = Json.Get((Dictionary<string, object>)Json.Parse(body), "error") as Dictionary<string, object>;
                if (e != null && Json.Get(e, "code") is string) code = (string)Json.Get(e, "code");
                if (e != null && Json.Get(e, "message") is string) message = (string)Json.Get(e, "message");
                if (e != null && Json.Get(e, "grant") != null) grant = GrantView.FromJson(Json.Get(e, "grant"));
            }
            catch (Exception)
            {
                if (!string.IsNullOrEmpty(body)) message = "HTTP " + status + ": " + (body.Length > 200 ? body.Substring(0, 200) : body);
            }
            return new PhotofinishException(status, code, message, retryAfter) { Grant = grant };
        }

        internal static int? RetryAfterOf(HttpResponseMessage res)
        {
            IEnumerable<string> values;
            int seconds;
            if (res.Headers.TryGetValues("Retry-After", out values)
                && int.TryParse(values.FirstOrDefault(), NumberStyles.None, CultureInfo.InvariantCulture, out seconds))
            {
                return seconds;
            }
            return null;
        }

        /// <summary>The wait before try attempt (1-based): doubling from RetryDelay, with jitter; Retry-After wins.</summary>
        internal TimeSpan Backoff(int attempt, int? retryAfter)
        {
            double ms;
            if (retryAfter != null) ms = retryAfter.Value * 1000.0;
            else
            {
                double jitter;
                lock (Jitter) jitter = 0.5 + Jitter.NextDouble() / 2;
                ms = options.RetryDelay.TotalMilliseconds * Math.Pow(2, attempt - 1) * jitter;
            }
            return TimeSpan.FromMilliseconds(Math.Min(ms, options.MaxRetryDelay.TotalMilliseconds));
        }

        private async Task<Answer> SendAsync(Call call, CancellationToken ct)
        {
            var url = Url(call.PathText, call.Query);
            var tries = call.Retry ? options.Retries + 1 : 1;
            for (var attempt = 1; ; attempt++)
            {
                int status;
                string text;
                int? retryAfter;
                using (var timeout = CancellationTokenSource.CreateLinkedTokenSource(ct))
                {
                    // The time limit covers the whole answer, its body included.
                    timeout.CancelAfter(options.Timeout);
                    try
                    {
                        using (var req = Request(call, url))
                        using (var res = await http.SendAsync(req, timeout.Token).ConfigureAwait(false))
                        {
                            status = (int)res.StatusCode;
                            text = await res.Content.ReadAsStringAsync().ConfigureAwait(false);
                            retryAfter = RetryAfterOf(res);
                        }
                    }
                    catch (Exception e)
                    {
                        if (ct.IsCancellationRequested) throw new OperationCanceledException(ct);
                        if (!(e is HttpRequestException || e is OperationCanceledException || e is System.IO.IOException)) throw;
                        if (attempt >= tries)
                        {
                            throw new PhotofinishNetworkException(call.Method + " " + url + ": " + e.Message + " (after " + attempt + " tries)", e, call.IdempotencyKey);
                        }
                        await Task.Delay(Backoff(attempt, null), ct).ConfigureAwait(false);
                        continue;
                    }
                }
                if (status >= 200 && status < 300) return new Answer { Status = status, Text = text };
                var refused = Refusal(status, text, retryAfter);
                refused.IdempotencyKey = call.IdempotencyKey;
                // A 429 was refused before anything was done: any call may be sent again. A 503
                // may leave the outcome unknown: only calls safe to repeat are; so is a retry
                // that met its first try still in flight.
                var again = status == 429 || (call.Retry && (status == 503 || refused.Code == ErrorCodes.IdempotencyKeyInFlight));
                if (again && attempt <= options.Retries)
                {
                    await Task.Delay(Backoff(attempt, retryAfter), ct).ConfigureAwait(false);
                    continue;
                }
                throw refused;
            }
        }
    }
}

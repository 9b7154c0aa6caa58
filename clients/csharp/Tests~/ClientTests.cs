// The C# client against a live Photofinish server, started by the Rust test
// clients_csharp (crates/photofinish-server/tests/it/clients.rs), which compiles this with
// mono's mcs and passes PF_URL, PF_ADMIN (an admin key), PF_ANN and PF_BOB (players'
// tokens) and PF_PREFIX. Every call of the client is made here, every way it reports a
// refusal, its retries (a write whose answer was lost is not counted twice), and the
// event stream. It prints "ok" and exits 0 when every test passed.
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

namespace Photofinish.Tests
{
    /// <summary>A context like Unity's main thread: one thread runs what is posted, in order, and says so.</summary>
    internal sealed class RecordingContext : SynchronizationContext
    {
        [ThreadStatic] internal static bool InPost;
        private readonly BlockingCollection<Action> queue = new BlockingCollection<Action>();

        internal RecordingContext()
        {
            var thread = new Thread(() =>
            {
                foreach (var work in queue.GetConsumingEnumerable()) work();
            });
            thread.IsBackground = true;
            thread.Start();
        }

        public override void Post(SendOrPostCallback d, object state)
        {
            queue.Add(() =>
            {
                InPost = true;
                try
                {
                    d(state);
                }
                finally
                {
                    InPost = false;
                }
            });
        }
    }

    internal static class ClientTests
    {
        private static string url;
        private static string prefix;
        private static PhotofinishClient admin;
        private static PhotofinishClient ann;
        private static PhotofinishClient bob;
        private static PhotofinishClient anonymous;

        private static int Main()
        {
            url = Env("PF_URL");
            prefix = Env("PF_PREFIX");
            admin = new PhotofinishClient(new ClientOptions { BaseUrl = url, Token = Env("PF_ADMIN") });
            ann = admin.WithToken(Env("PF_ANN"));
            bob = admin.WithToken(Env("PF_BOB"));
            anonymous = admin.WithToken(null);
            var tests = new List<KeyValuePair<string, Func<Task>>>
            {
                Test("JSON keeps 64-bit scores exact", JsonIsExact),
                Test("boards, writes and every read", BoardsWritesAndReads),
                Test("scores at the 64-bit ends, several columns", ScoresAndColumns),
                Test("joins, cohorts, tiers and moves", Competitions),
                Test("partitions and teams", PartitionsAndTeams),
                Test("rewards: a close's grants, a member's, and a claim paid once", Rewards),
                Test("moderation, audit, delete, patch, import and export", Admin),
                Test("refusals arrive as the server's status and code", Refusals),
                Test("a rate limit: 429 with Retry-After, waited out when retries allow", RateLimit),
                Test("a lost answer is retried under the same key and counted once", Retries),
                Test("live events, resumed after a dropped connection", Events),
            };
            var failed = 0;
            foreach (var t in tests)
            {
                try
                {
                    t.Value().GetAwaiter().GetResult();
                    Console.Error.WriteLine("ok - " + t.Key);
                }
                catch (Exception e)
                {
                    failed++;
                    Console.Error.WriteLine("FAILED - " + t.Key + ": " + e);
                }
            }
            if (failed > 0)
            {
                Console.WriteLine(failed + " of " + tests.Count + " failed");
                return 1;
            }
            Console.WriteLine("ok");
            return 0;
        }

        private static KeyValuePair<string, Func<Task>> Test(string name, Func<Task> body)
        {
            return new KeyValuePair<string, Func<Task>>(name, body);
        }

        private static string Env(string name)
        {
            var v = Environment.GetEnvironmentVariable(name);
            if (string.IsNullOrEmpty(v)) throw new InvalidOperationException(name + " is not set: run this through the Rust test clients_csharp");
            return v;
        }

        private static void Eq<T>(T want, T got, string what)
        {
            if (!EqualityComparer<T>.Default.Equals(want, got)) throw new Exception(what + ": want " + want + ", got " + got);
        }

        private static void Seq<T>(IEnumerable<T> want, IEnumerable<T> got, string what)
        {
            if (!want.SequenceEqual(got)) throw new Exception(what + ": want [" + string.Join(", ", want) + "], got [" + string.Join(", ", got) + "]");
        }

        private static void True(bool ok, string what)
        {
            if (!ok) throw new Exception(what);
        }

        private static async Task<PhotofinishException> Refused(Func<Task> call)
        {
            try
            {
                await call();
            }
            catch (PhotofinishException e)
            {
                return e;
            }
            throw new Exception("the call was not refused");
        }

        private static async Task<T> Throws<T>(Func<Task> call) where T : Exception
        {
            try
            {
                await call();
            }
            catch (T e)
            {
                return e;
            }
            throw new Exception("the call did not throw " + typeof(T).Name);
        }

        private static IEnumerable<string> Names(IEnumerable<EntryView> rows)
        {
            return rows.Select(e => e.Member);
        }

        private static Task JsonIsExact()
        {
            var v = (Dictionary<string, object>)Json.Parse("{\"score\": 9223372036854775807, \"low\": -9223372036854775808, \"x\": 1.5, \"s\": \"a\\u00e9\\n\"}");
            Eq(long.MaxValue, (long)v["score"], "max");
            Eq(long.MinValue, (long)v["low"], "min");
            Eq(1.5, (double)v["x"], "a double");
            Eq("a\u00e9\n", (string)v["s"], "a string");
            Eq("{\"score\":9223372036854775807,\"s\":\"a\\\"\"}", Json.Write(new Dictionary<string, object> { { "score", long.MaxValue }, { "s", "a\"" } }), "written");
            // What a game puts in metadata: floats, small ints, typed dictionaries, unsigned.
            var metadata = new Dictionary<string, object>
            {
                { "speed", 1.5f },
                { "lives", (short)3 },
                { "items", new Dictionary<string, int> { { "sword", 2 } } },
                { "big", ulong.MaxValue },
            };
            Eq("{\"speed\":1.5,\"lives\":3,\"items\":{\"sword\":2},\"big\":18446744073709551615}", Json.Write(metadata), "metadata written");
            return Task.FromResult(0);
        }

        private static async Task BoardsWritesAndReads()
        {
            var b = prefix + "main";
            var made = await admin.CreateBoardAsync(b, new BoardConfigBody { PlayerWrites = true, PublicRead = true });
            Eq(true, made.Created, "created");
            Eq(b, made.Board.Name, "name");
            Eq(false, (await admin.CreateBoardAsync(b, new BoardConfigBody { PlayerWrites = true, PublicRead = true })).Created, "created again");

            var w = await ann.SubmitAsync(b, "ann", new WriteBody { Score = 5, Metadata = new Dictionary<string, object> { { "level", 3L } } });
            Eq("ann", w.Member, "member");
            Eq(5L, w.Score, "score");
            Eq(1L, w.Rank, "rank");
            await bob.SubmitAsync(b, "bob", 3);
            var batch = await admin.SubmitBatchAsync(b, new[] { new WriteBody { Member = "cid", Score = 9 }, new WriteBody { Member = "dot", Score = 4 } });
            Seq(new long[] { 9, 4 }, batch.Select(x => x.Result.Score), "batch results");

            var m = await ann.MemberAsync(b, "ann");
            Seq(new long[] { 2, 5, 4 }, new[] { m.Rank, m.Score, m.Total }, "member");
            Eq(3L, (long)m.Metadata["level"], "metadata");
            Eq(2L, (await ann.MemberAsync(b, "ann", new ReadOptions { Ranking = "dense" })).Rank, "dense rank");
            var page = await anonymous.EntriesAsync(b, new PageOptions { Limit = 2 });
            Seq(new[] { "cid", "ann" }, Names(page.Entries), "page");
            Eq(4L, page.Total, "total");
            Seq(new[] { "dot", "bob" }, Names((await ann.EntriesAsync(b, new PageOptions { Offset = 2, Limit = 2 })).Entries), "second page");
            Seq(new[] { "ann", "dot", "bob" }, Names((await ann.AroundAsync(b, "dot", 1, 1)).Entries), "around");
            var q = await ann.QueryMembersAsync(b, new[] { "bob", "zed", "cid" });
            Seq(new[] { "cid", "bob" }, Names(q.Entries), "query");
            Seq(new[] { "zed" }, q.Missing, "missing");
            var r = await ann.RankOfScoreAsync(b, 6);
            Seq(new long[] { 2, 6, 4 }, new[] { r.Rank, r.Score, r.Total }, "rank of a score");
            var t = await ann.ThresholdsAsync(b, new long[] { 1, 3 }, new[] { 50.0 });
            Seq(new long?[] { 9, 4, 5 }, t.Thresholds.Select(x => x.Score), "thresholds");
            var across = await ann.MemberBoardsAsync("ann", new[] { b });
            Seq(new[] { b }, across.Boards.Select(x => x.Board), "member boards");
            Eq(2L, across.Boards[0].Rank, "rank across boards");
            var view = await ann.BoardAsync(b);
            Eq(4L, view.Members, "board members");
            True((await admin.BoardsAsync()).Boards.Any(x => x.Name == b), "listed");
            var one = await admin.BoardsAsync(limit: 1);
            Eq(1, one.Boards.Count, "a page of one board");
            var past = await admin.BoardsAsync(offset: one.Total);
            Eq(0 + " " + one.Total, past.Boards.Count + " " + past.Total, "past the last page");
            Eq("all", (await ann.PeriodsAsync(b)).Periods[0].Id, "periods");
            Eq("ok", (await anonymous.HealthAsync()).Status, "health");
        }

        private static async Task ScoresAndColumns()
        {
            var b = prefix + "big";
            await admin.CreateBoardAsync(b, new BoardConfigBody { Update = "set" });
            Eq(long.MaxValue, (await admin.SubmitAsync(b, "m", long.MaxValue)).Score, "max written");
            Eq(long.MaxValue, (await admin.MemberAsync(b, "m")).Score, "max read");
            await admin.SubmitAsync(b, "low", long.MinValue);
            Eq(long.MinValue, (await admin.MemberAsync(b, "low")).Score, "min read");
            Eq(2L, (await admin.RankOfScoreAsync(b, long.MaxValue - 1)).Rank, "rank near the top");
            await Throws<ArgumentException>(() => admin.MemberAsync(b, ".."));

            var c = prefix + "cols";
            await admin.CreateBoardAsync(c, new BoardConfigBody { Columns = new List<ColumnBody> { new ColumnBody { Name = "kills" }, new ColumnBody { Name = "time", Order = "asc" } } });
            var w = await admin.SubmitAsync(c, "ann", new WriteBody { Scores = new Dictionary<string, long> { { "kills", 3 }, { "time", 100 } } });
            Eq(100L, w.Scores["time"], "a column's value");
            await admin.SubmitAsync(c, "bob", new WriteBody { Scores = new Dictionary<string, long> { { "kills", 3 }, { "time", 90 } } });
            Eq(2L, (await admin.RankOfScoreAsync(c, new long[] { 3, 95 })).Rank, "rank of columns");
            Seq(new long[] { 90, 100 }, (await admin.EntriesAsync(c)).Entries.Select(e => e.Scores["time"]), "column order");
        }

        private static async Task Competitions()
        {
            var t = prefix + "cup";
            await admin.CreateBoardAsync(t, new BoardConfigBody { JoinRequired = true, PlayerWrites = true });
            var notJoined = await Refused(() => ann.SubmitAsync(t, "ann", 1));
            Eq(422, notJoined.Status, "status");
            Eq(ErrorCodes.NotJoined, notJoined.Code, "code");
            var j = await ann.JoinAsync(t, "ann");
            Eq(false, j.Already, "first join");
            Eq(true, (await ann.JoinAsync(t, "ann")).Already, "second join");
            Eq(1L, (await ann.SubmitAsync(t, "ann", 1)).Rank, "joined write");

            var l = prefix + "league";
            await admin.CreateBoardAsync(l, new BoardConfigBody
            {
                Reset = "daily",
                CohortSize = 2,
                League = new LeagueView { Tiers = new List<string> { "bronze", "silver" }, Promote = 1, Demote = 1 },
            });
            await admin.SubmitAsync(l, "ann", 5);
            await admin.SubmitAsync(l, "bob", 3);
            await admin.SubmitAsync(l, "cid", 4);
            var mine = await admin.CohortAsync(l, "bob");
            Eq(1L, mine.Cohort, "cohort");
            Seq(new[] { "ann", "bob" }, Names(mine.Entries), "cohort standings");
            Eq("bronze", mine.Tier, "cohort tier");
            Eq(2L, (await admin.CohortsAsync(l, "bronze")).Total, "cohorts");
            Seq(new[] { "cid" }, Names((await admin.CohortEntriesAsync(l, 2, "bronze")).Entries), "cohort 2");
            Eq("bronze", (await admin.TierAsync(l, "ann")).Tier, "tier");
            var moves = await admin.MovesAsync(l, (await admin.BoardAsync(l)).Period);
            Eq(false, moves.Closed, "not closed");
            Eq(0, moves.Moves.Count, "no moves yet");
        }

        private static async Task PartitionsAndTeams()
        {
            var g = prefix + "clans";
            await admin.CreateBoardAsync(g, new BoardConfigBody
            {
                Partitions = new PartitionsView { Max = 10 },
                Teams = new TeamsView { MaxSize = 10 },
            });
            var w = await admin.SubmitAsync(g, "ann", new WriteBody { Score = 5, Partition = "FR", Team = "wolves" });
            Eq("FR", w.Partition, "write's partition");
            Eq(1L, w.PartitionRank ?? 0, "write's partition rank");
            Eq("wolves", w.Team, "write's team");
            await admin.SubmitAsync(g, "bob", new WriteBody { Score = 7, Partition = "DE", Team = "wolves" });
            await admin.SubmitAsync(g, "cid", new WriteBody { Score = 9, Partition = "FR", Team = "bears" });
            Seq(new[] { "cid", "ann" }, Names((await admin.EntriesAsync(g, new PageOptions { Partition = "FR" })).Entries), "a partition's page");
            var m = await admin.MemberAsync(g, "ann", new ReadOptions { Partition = "FR" });
            Eq(2L, m.Rank, "rank in the partition");
            Eq("wolves", m.Team, "member's team");
            Seq(new[] { "DE", "FR" }, (await admin.PartitionsAsync(g)).Partitions.Select(p => p.Partition), "partitions");
            var teams = await admin.TeamsAsync(g, new PageOptions { Ranking = "competition" });
            Seq(new[] { "wolves", "bears" }, teams.Entries.Select(t => t.Team), "teams");
            Seq(new long[] { 12, 9 }, teams.Entries.Select(t => t.Score), "team sums");
            var wolves = await admin.TeamAsync(g, "wolves", new PageOptions { Limit = 1 });
            Eq(12L, wolves.Score, "team score");
            Seq(new[] { "bob" }, Names(wolves.Entries), "a team's members");
            var conflict = await Refused(() => admin.SubmitAsync(g, "ann", new WriteBody { Score = 1, Team = "bears" }));
            Eq(409, conflict.Status, "status");
            Eq(ErrorCodes.TeamConflict, conflict.Code, "code");
            var missing = await Refused(() => admin.TeamAsync(g, "owls"));
            Eq(ErrorCodes.TeamNotFound, missing.Code, "no such team");
        }

        private static async Task Rewards()
        {
            var b = prefix + "rewards";
            // A board without a reset closes at closes_at: 5 s from now, so the test waits that long.
            var closesAt = DateTime.UtcNow.AddSeconds(5).ToString("yyyy-MM-ddTHH:mm:ss.fffZ", CultureInfo.InvariantCulture);
            await admin.CreateBoardAsync(b, new BoardConfigBody
            {
                PlayerWrites = true,
                ClosesAt = closesAt,
                Rewards = new List<RewardRowView>
                {
                    new RewardRowView { From = 1, To = 1, Reward = "crown", Amount = 2 },
                    new RewardRowView { TopPercent = 100, Reward = "pin" },
                },
            });
            await admin.SubmitBatchAsync(b, new[]
            {
                new WriteBody { Member = "ann", Score = 9 },
                new WriteBody { Member = "bob", Score = 3 },
            });
            var deadline = DateTime.UtcNow.AddSeconds(30);
            var r = await admin.PeriodRewardsAsync(b, "all");
            while (!r.Granted)
            {
                True(DateTime.UtcNow < deadline, "the period never granted");
                await Task.Delay(200);
                r = await admin.PeriodRewardsAsync(b, "all");
            }
            Seq(new[] { b + ":all:1 ann 1 crown 2", b + ":all:2 bob 2 pin 1" },
                r.Grants.Select(g => g.Id + " " + g.Member + " " + g.Rank + " " + g.Reward + " " + g.Amount), "grants");
            var mine = await ann.MemberRewardsAsync("ann", "unclaimed", new[] { b });
            Seq(new[] { b + ":all:1" }, mine.Grants.Select(g => g.Id), "ann's unclaimed");
            var claimed = await ann.ClaimAsync("ann", b + ":all:1", prefix + "claim-1");
            Eq("player", claimed.ClaimedBy, "claimed by");
            True(claimed.ClaimedAt != null, "claimed at");
            Eq(claimed.ClaimedAt, (await ann.ClaimAsync("ann", b + ":all:1", prefix + "claim-1")).ClaimedAt, "the key's answer again");
            var again = await Refused(() => ann.ClaimAsync("ann", b + ":all:1"));
            Eq(409, again.Status, "second claim");
            Eq(ErrorCodes.AlreadyClaimed, again.Code, "second claim's code");
            Eq(claimed.ClaimedAt, again.Grant.ClaimedAt, "the grant it carries");
            Eq(ErrorCodes.Forbidden, (await Refused(() => ann.ClaimAsync("bob", b + ":all:2"))).Code, "another's");
            Eq(1L, (await admin.MemberRewardsAsync("ann", "claimed", new[] { b })).Total, "claimed");
            // Her export: the board's period and grant as she sees herself (no audit, no actor).
            var own = await ann.ExportMemberAsync("ann");
            var here = own.Boards.Single(x => x.Board == b);
            Seq(new[] { "all 9" }, here.Periods.Select(p => p.Period + " " + p.Entry.Score), "her export's periods");
            Seq(new[] { b + ":all:1 -" }, here.Grants.Select(g => g.Id + " " + (g.ClaimedBy ?? "-")), "her export's grants");
            True(own.Audit == null, "no audit in a player's export");
            True((await admin.ExportMemberAsync("ann")).Audit != null, "an admin's export has the audit");
            Eq(ErrorCodes.Forbidden, (await Refused(() => ann.ExportMemberAsync("bob"))).Code, "another's export");
        }

        private static async Task Admin()
        {
            var b = prefix + "mod";
            await admin.CreateBoardAsync(b, new BoardConfigBody { PublicRead = true });
            await admin.SubmitBatchAsync(b, new[]
            {
                new WriteBody { Member = "ann", Score = 5 },
                new WriteBody { Member = "bob", Score = 3 },
                new WriteBody { Member = "cheat", Score = 99 },
            });
            await admin.HideAsync(b, "cheat");
            Seq(new[] { "ann", "bob" }, Names((await anonymous.EntriesAsync(b)).Entries), "hidden");
            Seq(new[] { "cheat" }, (await admin.HiddenAsync(b)).Members, "hidden list");
            await admin.UnhideAsync(b, "cheat");
            Eq(3L, (await anonymous.EntriesAsync(b)).Total, "shown");
            await admin.HideEverywhereAsync("cheat");
            Eq(2L, (await anonymous.EntriesAsync(b)).Total, "hidden everywhere");
            await admin.UnhideEverywhereAsync("cheat");
            await admin.DeleteMemberAsync(b, "cheat");
            Eq(ErrorCodes.MemberNotFound, (await Refused(() => admin.MemberAsync(b, "cheat"))).Code, "deleted");
            Eq(4L, (await admin.PatchBoardAsync(b, new BoardPatchBody { Retention = 4 })).Retention, "patched");
            var audit = await admin.AuditAsync(b, null, 50);
            Seq(new[] { "board.patch", "member.delete", "member.unhide" }, audit.Entries.Take(3).Select(e => e.Action), "audit");

            var exported = await admin.ExportAsync(b);
            Seq(new[] { "ann:5", "bob:3" }, exported.Select(x => x.Member + ":" + x.Score), "export");
            var copy = prefix + "copy";
            await admin.CreateBoardAsync(copy);
            var lines = exported.Select(x => new ImportLine { Member = x.Member, Score = x.Score, ReachedAt = x.ReachedAt }).ToList();
            lines.Add(new ImportLine { Member = "big", Score = long.MaxValue });
            Eq(3L, (await admin.ImportAsync(copy, lines)).Imported, "imported");
            Eq(long.MaxValue, (await admin.MemberAsync(copy, "big")).Score, "imported score");
            Eq(exported[0].ReachedAt, (await admin.MemberAsync(copy, "ann")).ReachedAt, "reached_at kept");
            await admin.DeleteBoardAsync(copy);
            Eq(ErrorCodes.BoardNotFound, (await Refused(() => admin.BoardAsync(copy))).Code, "board deleted");
            // A member erased everywhere: gone from every board, named in the audit by an HMAC.
            var gone = prefix + "gone";
            await admin.SubmitAsync(b, gone, 1);
            var key = prefix + "erase-once";
            var erased = await admin.EraseMemberAsync(gone, key);
            Eq(gone + " 1", erased.Member + " " + erased.Boards, "erased");
            // A retry with its key gets the first answer again; without one, nothing is left.
            Eq(1L, (await admin.EraseMemberAsync(gone, key)).Boards, "the first answer again");
            Eq(0L, (await admin.EraseMemberAsync(gone)).Boards, "nothing left");
            Eq(ErrorCodes.MemberNotFound, (await Refused(() => admin.MemberAsync(b, gone))).Code, "erased member");
            Eq(0, (await admin.ExportMemberAsync(gone)).Boards.Count, "nothing left to export");
        }

        private static async Task Refusals()
        {
            var b = prefix + "main";
            var cases = new List<Tuple<Func<Task>, int, string>>
            {
                Tuple.Create<Func<Task>, int, string>(() => ann.EntriesAsync(b, new PageOptions { Limit = 5000 }), 400, ErrorCodes.InvalidParameter),
                Tuple.Create<Func<Task>, int, string>(() => admin.WithToken("pf_not_a_key").EntriesAsync(b), 401, ErrorCodes.Unauthorized),
                Tuple.Create<Func<Task>, int, string>(() => ann.SubmitAsync(b, "bob", 1), 403, ErrorCodes.Forbidden),
                Tuple.Create<Func<Task>, int, string>(() => ann.MemberAsync(b, "zed"), 404, ErrorCodes.MemberNotFound),
                Tuple.Create<Func<Task>, int, string>(() => ann.EntriesAsync(prefix + "none"), 404, ErrorCodes.BoardNotFound),
                Tuple.Create<Func<Task>, int, string>(() => admin.CreateBoardAsync(b, new BoardConfigBody { Order = "asc" }), 409, ErrorCodes.BoardConfigConflict),
                Tuple.Create<Func<Task>, int, string>(() => admin.SubmitAsync(b, "ann", long.MaxValue), 422, ErrorCodes.ScoreOverflow),
                // What the document allows but a rule refuses is 422 under its code
                // (docs/SPEC.md §3): the board's config, two values compared.
                Tuple.Create<Func<Task>, int, string>(() => ann.CohortsAsync(b), 422, ErrorCodes.InvalidParameter),
                Tuple.Create<Func<Task>, int, string>(() => admin.CreateBoardAsync(prefix + "bounds", new BoardConfigBody { MinScore = 5, MaxScore = 4 }), 422, ErrorCodes.InvalidConfig),
            };
            foreach (var c in cases)
            {
                var e = await Refused(c.Item1);
                Eq(c.Item2 + " " + c.Item3, e.Status + " " + e.Code, e.Message);
                True(e.Message.Length > 0, "a message");
            }
            Eq(5L, (await admin.MemberAsync(b, "ann")).Score, "nothing changed");
            Eq(ErrorCodes.BoardNotFound, (await Refused(() => admin.BoardAsync(prefix + "bounds"))).Code, "no board made");
        }

        private static async Task RateLimit()
        {
            var b = prefix + "main";
            var once = new PhotofinishClient(new ClientOptions { BaseUrl = url, Retries = 0 });
            PhotofinishException limited = null;
            for (var i = 0; i < 20 && limited == null; i++)
            {
                try
                {
                    await once.EntriesAsync(b);
                }
                catch (PhotofinishException e)
                {
                    limited = e;
                }
            }
            True(limited != null, "the anonymous rate was never reached");
            Eq("429 rate_limited", limited.Status + " " + limited.Code, "refusal");
            True(limited.RetryAfter >= 1, "Retry-After");
            var patient = new PhotofinishClient(new ClientOptions { BaseUrl = url, Retries = 3 });
            Eq(4L, (await patient.EntriesAsync(b)).Total, "waited out");
        }

        private static async Task Retries()
        {
            var b = prefix + "retry";
            await admin.CreateBoardAsync(b, new BoardConfigBody { Update = "incr" });
            string proxyUrl;
            using (var proxy = new FaultyProxy(url))
            {
                proxyUrl = proxy.Url;
                var via = new PhotofinishClient(new ClientOptions { BaseUrl = proxy.Url, Token = Env("PF_ADMIN"), RetryDelay = TimeSpan.FromMilliseconds(10) });
                proxy.Fail("drop");
                Eq(5L, (await via.SubmitAsync(b, "ann", 5)).Score, "answer after the retry");
                Eq(2, proxy.Forwarded, "the write reached the server twice");
                Eq(5L, (await admin.MemberAsync(b, "ann")).Score, "counted once");

                proxy.Fail("drop");
                var r = await via.SubmitBatchAsync(b, new[] { new WriteBody { Member = "ann", Score = 1 }, new WriteBody { Member = "bob", Score = 2 } });
                Eq(2, r.Count, "batch answers");
                Eq(6L, (await admin.MemberAsync(b, "ann")).Score, "batch counted once");
                Eq(2L, (await admin.MemberAsync(b, "bob")).Score, "batch counted once (bob)");

                proxy.Fail("busy", "busy");
                Eq(3L, (await via.SubmitAsync(b, "bob", 1)).Score, "503s waited out");
                var strict = new PhotofinishClient(new ClientOptions { BaseUrl = proxy.Url, Token = Env("PF_ADMIN"), Retries = 1, RetryDelay = TimeSpan.FromMilliseconds(10) });
                proxy.Fail("busy", "busy");
                var busy = await Refused(() => strict.SubmitAsync(b, "bob", 1));
                Eq("503 overloaded", busy.Status + " " + busy.Code, "503 after the retries");
                Eq(3L, (await admin.MemberAsync(b, "bob")).Score, "not applied");
                // Tried again later with the key the error names: counted once however often.
                True(busy.IdempotencyKey != null, "the error names its key");
                var again = new WriteBody { Score = 1 };
                Eq(4L, (await strict.SubmitAsync(b, "bob", again, busy.IdempotencyKey)).Score, "sent again with the key");
                Eq(4L, (await strict.SubmitAsync(b, "bob", again, busy.IdempotencyKey)).Score, "and again");
                Eq(4L, (await admin.MemberAsync(b, "bob")).Score, "counted once");

                proxy.Fail("html");
                var page = await Refused(() => via.BoardAsync(b));
                Eq("502 " + PhotofinishException.UnexpectedAnswer, page.Status + " " + page.Code, "a gateway's page");
                True(page.Message.Contains("Bad gateway"), "its text in the message");

                var empty = prefix + "imp";
                await admin.CreateBoardAsync(empty);
                proxy.Fail("drop");
                await Throws<PhotofinishNetworkException>(() => via.ImportAsync(empty, new[] { new ImportLine { Member = "x", Score = 1 } }));
                Eq(1L, (await admin.BoardAsync(empty)).Members, "an import sent once");
            }
            var gone = new PhotofinishClient(new ClientOptions { BaseUrl = proxyUrl, Retries = 1, RetryDelay = TimeSpan.FromMilliseconds(10) });
            await Throws<PhotofinishNetworkException>(() => gone.HealthAsync());
        }

        private static async Task Events()
        {
            var b = prefix + "live";
            await admin.CreateBoardAsync(b, new BoardConfigBody { PlayerWrites = true });
            var seen = new List<BoardEvent>();
            using (var proxy = new FaultyProxy(url))
            using (var stop = new CancellationTokenSource())
            {
                var via = new PhotofinishClient(new ClientOptions { BaseUrl = proxy.Url, Token = Env("PF_ANN"), RetryDelay = TimeSpan.FromMilliseconds(50) });
                // Events are handed to the context ListenAsync was called on (Unity's main thread).
                var context = new RecordingContext();
                var offContext = 0;
                SynchronizationContext.SetSynchronizationContext(context);
                var listening = via.ListenAsync(b, e =>
                {
                    if (!RecordingContext.InPost) Interlocked.Increment(ref offContext);
                    lock (seen) seen.Add(e);
                }, null, stop.Token);
                SynchronizationContext.SetSynchronizationContext(null);
                Func<int> count = () => { lock (seen) return seen.Count; };
                Func<int, Task> until = async n =>
                {
                    var deadline = DateTime.UtcNow.AddSeconds(10);
                    while (count() < n)
                    {
                        True(DateTime.UtcNow < deadline, "waited for " + n + " events, saw " + count());
                        await Task.Delay(50);
                    }
                };
                var opened = DateTime.UtcNow.AddSeconds(10);
                for (var s = 1; count() == 0; s++)
                {
                    True(DateTime.UtcNow < opened, "the stream never opened");
                    await ann.SubmitAsync(b, "ann", s);
                    await Task.Delay(100);
                }
                Eq("score", seen[0].Type, "first event");
                var before = count();
                proxy.CutAll();
                await bob.SubmitAsync(b, "bob", long.MaxValue / 2);
                await until(before + 1);
                BoardEvent e1;
                lock (seen) e1 = seen[before];
                Eq("score bob " + (long.MaxValue / 2) + " 1", e1.Type + " " + e1.Member + " " + e1.Score + " " + e1.Rank, "the write made while cut off");
                lock (seen)
                {
                    True(!seen.Any(x => x.Type == "resync"), "the stream resumed where it stopped");
                    var ids = seen.Select(x => long.Parse(x.Id.Replace("-", ""))).ToList();
                    Seq(ids.OrderBy(x => x), ids, "ids increase");
                    Eq(ids.Count, ids.Distinct().Count(), "no event twice");
                }
                await admin.DeleteMemberAsync(b, "bob");
                await until(before + 2);
                BoardEvent e2;
                lock (seen) e2 = seen[before + 1];
                Eq("remove bob all", e2.Type + " " + e2.Member + " " + e2.Period, "a removal");
                Eq(0, offContext, "events delivered off the caller's context");
                stop.Cancel();
                await listening;
            }
            // A filter naming a member whose name holds a comma.
            using (var stop = new CancellationTokenSource())
            {
                var filtered = new List<BoardEvent>();
                var listening = ann.ListenAsync(b, e => { lock (filtered) filtered.Add(e); }, new EventsOptions { Members = new[] { "a,b" } }, stop.Token);
                var deadline = DateTime.UtcNow.AddSeconds(10);
                while (true)
                {
                    lock (filtered) if (filtered.Count > 0) break;
                    True(DateTime.UtcNow < deadline, "the filtered stream never showed a write");
                    await admin.SubmitAsync(b, "a", 1);
                    await admin.SubmitAsync(b, "a,b", 1);
                    await Task.Delay(100);
                }
                lock (filtered) True(filtered.All(e => e.Member == "a,b"), "only a,b: " + string.Join(" ", filtered.Select(e => e.Member)));
                stop.Cancel();
                await listening;
            }
            var refused = await Refused(() => admin.WithToken("pf_not_a_key").ListenAsync(b, e => { }, null, CancellationToken.None));
            Eq(401, refused.Status, "a refused stream");
        }
    }
}

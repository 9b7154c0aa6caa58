// A sample MonoBehaviour: shows a board's top ten and the player's rank, submits a score
// from a button, and stays live from the board's events. Put it on a GameObject, set the
// server, board and the player's token (from your login) in the inspector.
using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Photofinish;
using UnityEngine;

public class LeaderboardSample : MonoBehaviour
{
    [SerializeField] private string server = "http://127.0.0.1:7770";
    [SerializeField] private string board = "weekly";
    [SerializeField] private string player = "ann";
    [SerializeField] private string playerToken = "";

    private PhotofinishClient client;
    private readonly CancellationTokenSource stop = new CancellationTokenSource();
    private List<EntryView> top = new List<EntryView>();
    private string mine = "not ranked yet";
    private string status = "";
    private long nextScore = 100;
    // The key of a submit whose outcome is unknown (offline): sent again with it, it counts once.
    private string pendingKey;
    private bool dirty = true;
    private bool refreshing;

    private async void Start()
    {
        client = new PhotofinishClient(new ClientOptions { BaseUrl = server, Token = playerToken });
        try
        {
            // Called from the main thread: each event arrives on the main thread. An event
            // only marks the list stale; Update reloads it, one reload at a time.
            await client.ListenAsync(board, e => dirty = true, null, stop.Token);
        }
        catch (PhotofinishException e)
        {
            status = "events: " + e.Code;
        }
        catch (OperationCanceledException)
        {
        }
    }

    private void Update()
    {
        if (dirty && !refreshing) Refresh();
    }

    private async void Refresh()
    {
        dirty = false;
        refreshing = true;
        try
        {
            top = (await client.EntriesAsync(board, new PageOptions { Limit = 10 }, stop.Token)).Entries;
            var me = await client.MemberAsync(board, player, null, stop.Token);
            mine = "#" + me.Rank + " of " + me.Total + " with " + me.Score;
        }
        catch (PhotofinishException e) when (e.Code == ErrorCodes.MemberNotFound)
        {
            mine = "not ranked yet";
        }
        catch (PhotofinishException e)
        {
            status = e.Code + ": " + e.Message;
        }
        catch (PhotofinishNetworkException e)
        {
            status = "offline: " + e.Message;
        }
        catch (OperationCanceledException)
        {
        }
        finally
        {
            refreshing = false;
        }
    }

    private async void Submit()
    {
        try
        {
            // Retried on a bad network; the idempotency key makes it count once.
            var w = await client.SubmitAsync(board, player, new WriteBody { Score = nextScore }, pendingKey, stop.Token);
            pendingKey = null;
            status = "submitted " + w.Score + ", now #" + w.Rank;
            nextScore += 10;
        }
        catch (PhotofinishNetworkException e)
        {
            pendingKey = e.IdempotencyKey;
            status = "offline: press again to resend";
        }
        catch (PhotofinishException e)
        {
            pendingKey = e.Status == 503 ? e.IdempotencyKey : null;
            status = e.Code + ": " + e.Message;
        }
        catch (OperationCanceledException)
        {
        }
    }

    private void OnGUI()
    {
        GUILayout.Label(board + " — you: " + mine);
        foreach (var e in top) GUILayout.Label(e.Rank + ". " + e.Member + "  " + e.Score);
        if (GUILayout.Button((pendingKey == null ? "Submit " : "Resend ") + nextScore)) Submit();
        GUILayout.Label(status);
    }

    private void OnDestroy()
    {
        // Ends the event stream and any call in flight (they end in OperationCanceledException).
        stop.Cancel();
    }
}

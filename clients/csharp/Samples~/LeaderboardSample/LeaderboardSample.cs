// A sample MonoBehaviour: shows a board's top ten and the player's rank, submits a score
// from a button, and keeps the list live from the board's events. Put it on a GameObject,
// set the server, board and the player's token (from your login) in the inspector.
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

    private async void Start()
    {
        client = new PhotofinishClient(new ClientOptions { BaseUrl = server, Token = playerToken });
        await Refresh();
        try
        {
            // Started here, on the main thread: each event arrives on the main thread.
            await client.ListenAsync(board, async e => await Refresh(), null, stop.Token);
        }
        catch (PhotofinishException e)
        {
            status = "events: " + e.Code;
        }
    }

    private async Task Refresh()
    {
        try
        {
            top = (await client.EntriesAsync(board, new PageOptions { Limit = 10 })).Entries;
            var me = await client.MemberAsync(board, player);
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
    }

    private async void Submit()
    {
        try
        {
            // Retried on a bad network; the idempotency key makes it count once.
            var w = await client.SubmitAsync(board, player, nextScore);
            status = "submitted " + w.Score + ", now #" + w.Rank;
            nextScore += 10;
        }
        catch (PhotofinishException e)
        {
            status = e.Code + ": " + e.Message;
        }
    }

    private void OnGUI()
    {
        GUILayout.Label(board + " — you: " + mine);
        foreach (var e in top) GUILayout.Label(e.Rank + ". " + e.Member + "  " + e.Score);
        if (GUILayout.Button("Submit " + nextScore)) Submit();
        GUILayout.Label(status);
    }

    private void OnDestroy()
    {
        stop.Cancel();
        client?.Dispose();
    }
}

// A TCP proxy in front of the test server that fails on purpose, so the tests see what a
// game sees on a bad network: "drop" lets the next request reach the server (which
// applies it) and cuts the connection as the answer arrives; "busy" answers the next
// request 503 without reaching the server; "html" answers it 502 with a web page, as a
// broken gateway would; CutAll cuts every open connection.
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Photofinish.Tests
{
    internal sealed class FaultyProxy : IDisposable
    {
        private readonly TcpListener listener;
        private readonly string upstreamHost;
        private readonly int upstreamPort;
        private readonly ConcurrentQueue<string> faults = new ConcurrentQueue<string>();
        private readonly ConcurrentDictionary<Socket, bool> open = new ConcurrentDictionary<Socket, bool>();
        private int forwarded;

        /// <summary>Requests that reached the server.</summary>
        internal int Forwarded
        {
            get { return Volatile.Read(ref forwarded); }
        }

        internal string Url { get; private set; }

        internal FaultyProxy(string upstreamUrl)
        {
            var u = new Uri(upstreamUrl);
            upstreamHost = u.Host;
            upstreamPort = u.Port;
            listener = new TcpListener(IPAddress.Loopback, 0);
            listener.Start();
            Url = "http://127.0.0.1:" + ((IPEndPoint)listener.LocalEndpoint).Port;
            Task.Run(AcceptLoop);
        }

        internal void Fail(params string[] next)
        {
            foreach (var f in next) faults.Enqueue(f);
        }

        internal void CutAll()
        {
            foreach (var s in open.Keys) Close(s);
        }

        public void Dispose()
        {
            listener.Stop();
            CutAll();
        }

        private void Close(Socket s)
        {
            bool ignored;
            open.TryRemove(s, out ignored);
            try
            {
                s.Close();
            }
            catch (Exception)
            {
            }
        }

        private async Task AcceptLoop()
        {
            while (true)
            {
                Socket client;
                try
                {
                    client = await listener.AcceptSocketAsync().ConfigureAwait(false);
                }
                catch (Exception)
                {
                    return;
                }
                Forget(Task.Run(() => Serve(client)));
            }
        }

        /// <summary>Runs a task to its end unwatched (each one ends by closing its sockets).</summary>
        private static void Forget(Task task)
        {
        }

        private async Task Serve(Socket client)
        {
            open[client] = true;
            var up = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            open[up] = true;
            string fault = null;
            try
            {
                await up.ConnectAsync(upstreamHost, upstreamPort).ConfigureAwait(false);
                Forget(Task.Run(() => Back(up, client, () => fault)));
                var buf = new byte[65536];
                while (true)
                {
                    var n = await client.ReceiveAsync(new ArraySegment<byte>(buf), SocketFlags.None).ConfigureAwait(false);
                    if (n == 0) break;
                    var head = Encoding.ASCII.GetString(buf, 0, Math.Min(n, 8));
                    if (head.StartsWith("GET ") || head.StartsWith("POST ") || head.StartsWith("PUT ") || head.StartsWith("PATCH ") || head.StartsWith("DELETE "))
                    {
                        string f;
                        fault = faults.TryDequeue(out f) ? f : null;
                        if (fault != "busy" && fault != "html") Interlocked.Increment(ref forwarded);
                    }
                    if (fault == "busy" || fault == "html")
                    {
                        var busy = fault == "busy";
                        var body = busy
                            ? "{\"error\":{\"code\":\"overloaded\",\"message\":\"busy (the test's proxy)\"}}"
                            : "<html><body>Bad gateway</body></html>";
                        var answer = "HTTP/1.1 " + (busy ? "503 Service Unavailable" : "502 Bad Gateway")
                            + "\r\nContent-Type: " + (busy ? "application/json" : "text/html") + "\r\nRetry-After: 0\r\n"
                            + "Content-Length: " + body.Length + "\r\nConnection: close\r\n\r\n" + body;
                        await client.SendAsync(new ArraySegment<byte>(Encoding.ASCII.GetBytes(answer)), SocketFlags.None).ConfigureAwait(false);
                        break;
                    }
                    await up.SendAsync(new ArraySegment<byte>(buf, 0, n), SocketFlags.None).ConfigureAwait(false);
                }
            }
            catch (Exception)
            {
            }
            finally
            {
                Close(up);
                Close(client);
            }
        }

        private async Task Back(Socket up, Socket client, Func<string> fault)
        {
            var buf = new byte[65536];
            try
            {
                while (true)
                {
                    var n = await up.ReceiveAsync(new ArraySegment<byte>(buf), SocketFlags.None).ConfigureAwait(false);
                    if (n == 0) break;
                    if (fault() == "drop")
                    {
                        // The server answered: it applied the request. The game never hears of it.
                        break;
                    }
                    await client.SendAsync(new ArraySegment<byte>(buf, 0, n), SocketFlags.None).ConfigureAwait(false);
                }
            }
            catch (Exception)
            {
            }
            Close(up);
            Close(client);
        }
    }
}

// What a call can end with besides its answer: the server's refusal, with its HTTP status
// and stable code (ErrorCodes lists them, generated from the server's OpenAPI document),
// or no answer at all after the retries.
using System;

namespace Photofinish
{
    /// <summary>The server refused the call: its HTTP status, code and message.</summary>
    public sealed class PhotofinishException : Exception
    {
        /// <summary>The code of an answer that was not the server's error shape (a proxy's page).</summary>
        public const string UnexpectedAnswer = "unexpected_answer";

        /// <summary>The HTTP status (400, 401, 403, 404, 409, 413, 422, 429, 503, 507, …).</summary>
        public int Status { get; private set; }

        /// <summary>The server's stable code (see <see cref="ErrorCodes"/>), or <see cref="UnexpectedAnswer"/>.</summary>
        public string Code { get; private set; }

        /// <summary>Seconds the server asked to wait before trying again (429, 503), if it said.</summary>
        public int? RetryAfter { get; private set; }

        /// <summary>
        /// The Idempotency-Key the call was sent with, if it had one: after a 503 or an
        /// idempotency_key_in_flight the outcome may be unknown, and sending the call again
        /// with this key counts it once whatever happened.
        /// </summary>
        public string IdempotencyKey { get; internal set; }

        /// <summary>On already_claimed (409): the grant, as it was claimed (docs/SPEC.md §16).</summary>
        public GrantView Grant { get; internal set; }

        public PhotofinishException(int status, string code, string message, int? retryAfter)
            : base(message)
        {
            Status = status;
            Code = code;
            RetryAfter = retryAfter;
        }

        public override string ToString()
        {
            return "PhotofinishException " + Status + " " + Code + ": " + Message;
        }
    }

    /// <summary>The call got no answer: the connection failed or timed out, every try.</summary>
    public sealed class PhotofinishNetworkException : Exception
    {
        /// <summary>
        /// The Idempotency-Key the call was sent with, if it had one: the write may have been
        /// applied, and sending it again with this key counts it once whatever happened.
        /// </summary>
        public string IdempotencyKey { get; private set; }

        public PhotofinishNetworkException(string message, Exception inner, string idempotencyKey)
            : base(message, inner)
        {
            IdempotencyKey = idempotencyKey;
        }
    }
}

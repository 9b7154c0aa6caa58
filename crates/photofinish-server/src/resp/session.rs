//! A RESP connection's state between commands ([`Session`]): who it is (its credential,
//! checked again every round), its name, its protocol and answers not yet written, and
//! the command counters it has used. The commands take it; the connection
//! ([`super::conn`]) runs rounds over it.

use std::net::SocketAddr;
use std::sync::Arc;

use photofinish_core::access::Caller;

use super::error::{wrongpass, CmdError};
use super::reply::{Out, Proto};
use crate::app::App;
use crate::auth::Identity;

/// A connection's state between commands.
pub struct Session {
    /// The server.
    pub app: Arc<App>,
    /// The client's address (anonymous rate limits).
    pub peer: SocketAddr,
    /// The connection's id (`CLIENT ID`, `HELLO`).
    pub id: u64,
    /// The credential given, re-checked every round. Never printed.
    pub(super) token: Option<String>,
    /// Who the connection is.
    pub identity: Identity,
    /// `CLIENT SETNAME`.
    pub name: Option<String>,
    /// Answers not yet written.
    pub out: Out,
    /// `QUIT` was sent: close after this round's answers.
    pub quit: bool,
    /// The command counters this connection has used, by name and outcome (`true`: ok):
    /// looked up in the metrics once per connection, not once per command.
    pub(super) counters: Vec<(
        &'static str,
        bool,
        prometheus_client::metrics::counter::Counter,
    )>,
}

fn anonymous() -> Identity {
    Identity {
        caller: Caller::Anonymous,
        rate: None,
    }
}

/// Who a connection is before it gives a credential (open on an open server).
fn unauthenticated(app: &App) -> Identity {
    app.auth.identify(None).unwrap_or_else(|_| anonymous())
}

impl Session {
    /// A new connection from `peer`.
    pub fn new(app: Arc<App>, peer: SocketAddr, id: u64) -> Self {
        let identity = unauthenticated(&app);
        Self {
            app,
            peer,
            id,
            token: None,
            identity,
            name: None,
            out: Out::new(),
            quit: false,
            counters: Vec::new(),
        }
    }

    /// Takes `token` as the connection's credential, or refuses it (`WRONGPASS`) and
    /// keeps the one before. An open server takes anything, as HTTP ignores credentials.
    pub fn authenticate(&mut self, token: &[u8]) -> Result<(), CmdError> {
        if !self.app.auth.has_credentials() {
            return Ok(());
        }
        let token = std::str::from_utf8(token).map_err(|_| wrongpass())?;
        let identity = self
            .app
            .auth
            .identify(Some(token))
            .map_err(|_| wrongpass())?;
        self.identity = identity;
        self.token = Some(token.to_owned());
        Ok(())
    }

    /// `RESET`: no credential, no name, RESP2.
    pub fn reset(&mut self) {
        self.token = None;
        self.identity = unauthenticated(&self.app);
        self.name = None;
        self.out.proto = Proto::Resp2;
    }

    /// Checks the credential again: one revoked or expired since leaves the connection
    /// anonymous.
    pub(super) fn refresh(&mut self) {
        if let Some(t) = &self.token {
            match self.app.auth.identify(Some(t)) {
                Ok(id) => self.identity = id,
                Err(_) => {
                    self.token = None;
                    self.identity = anonymous();
                }
            }
        }
    }

    /// One token from the caller's rate limit.
    pub(super) fn take_token(&self) -> Result<(), CmdError> {
        if let Some(limiter) = &self.app.limiter {
            let id = &self.identity;
            limiter.check(&id.caller, id.rate, Some(self.peer.ip()))?;
        }
        Ok(())
    }

    pub(super) fn error(&mut self, e: &CmdError) {
        match e {
            CmdError::Raw(line) => self.out.error(line),
            CmdError::Api(e) => {
                if e.code.is_refusal() {
                    self.app.metrics.refused(e.code.as_str());
                }
                self.out.api_error(e)
            }
        }
    }

    pub(super) fn count(&mut self, command: &'static str, ok: bool) {
        if let Some((_, _, c)) = self
            .counters
            .iter()
            .find(|(name, o, _)| *name == command && *o == ok)
        {
            c.inc();
            return;
        }
        let labels = crate::metrics::RespLabels {
            command: command.to_owned(),
            outcome: if ok { "ok" } else { "error" }.to_owned(),
        };
        let counter = self
            .app
            .metrics
            .resp_commands
            .get_or_create(&labels)
            .clone();
        counter.inc();
        self.counters.push((command, ok, counter));
    }
}

//! What the web tests share: a client that does not follow redirects, cookies, CSRF tokens,
//! and logging in through the form.
#![allow(dead_code)]

use catalog_host::testkit::TestServer;

pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// The `name=value` of a `Set-Cookie` named `name` in an answer.
pub(crate) fn set_cookie(r: &reqwest::Response, name: &str) -> Option<String> {
    r.headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .map(str::to_string)
}

/// The value of the hidden `_csrf_token` field of a page.
pub(crate) fn csrf_token(page: &str) -> String {
    let at = page
        .find("name=\"_csrf_token\" value=\"")
        .expect("a CSRF field")
        + 26;
    page[at..at + page[at..].find('"').unwrap()].to_string()
}

/// A visitor's browser: the cookies it holds (a session once logged in, its CSRF cookie).
pub(crate) struct Browser {
    pub(crate) base: String,
    pub(crate) cookies: String,
    pub(crate) c: reqwest::Client,
}

impl Browser {
    /// A visitor who has opened the login page (so holds a CSRF cookie), not logged in.
    pub(crate) async fn anonymous(s: &TestServer) -> Browser {
        let c = client();
        let r = c
            .get(format!("{}/user/login", s.base_url))
            .send()
            .await
            .unwrap();
        let csrf = set_cookie(&r, "catalog_csrf").expect("a CSRF cookie");
        Browser {
            base: s.base_url.clone(),
            cookies: csrf.split(';').next().unwrap().to_string(),
            c,
        }
    }

    /// Logged in through the form as `name` (with the test password).
    pub(crate) async fn logged_in(s: &TestServer, name: &str) -> Browser {
        let mut b = Browser::anonymous(s).await;
        let page = b.text("/user/login").await;
        let r =
            b.c.post(format!("{}/user/login", b.base))
                .header("Cookie", &b.cookies)
                .form(&[
                    ("login", name),
                    ("password", catalog_host::testkit::PASSWORD),
                    ("_csrf_token", &csrf_token(&page)),
                ])
                .send()
                .await
                .unwrap();
        let session = set_cookie(&r, "catalog_session").expect("logged in");
        b.cookies = format!("{}; {}", session.split(';').next().unwrap(), b.cookies);
        b
    }

    pub(crate) async fn get(&self, path: &str) -> reqwest::Response {
        self.c
            .get(format!("{}{path}", self.base))
            .header("Cookie", &self.cookies)
            .send()
            .await
            .unwrap()
    }

    pub(crate) async fn text(&self, path: &str) -> String {
        self.get(path).await.text().await.unwrap()
    }

    /// Posts a form with the CSRF token of the page at `form_page`.
    pub(crate) async fn post(
        &self,
        form_page: &str,
        action: &str,
        fields: &[(&str, &str)],
    ) -> reqwest::Response {
        let token = csrf_token(&self.text(form_page).await);
        let mut all: Vec<(&str, &str)> = fields.to_vec();
        all.push(("_csrf_token", &token));
        self.c
            .post(format!("{}{action}", self.base))
            .header("Cookie", &self.cookies)
            .form(&all)
            .send()
            .await
            .unwrap()
    }

    /// Posts a multipart form (with files) with the CSRF token of the page at `form_page`.
    pub(crate) async fn post_multipart(
        &self,
        form_page: &str,
        action: &str,
        form: reqwest::multipart::Form,
    ) -> reqwest::Response {
        let token = csrf_token(&self.text(form_page).await);
        self.c
            .post(format!("{}{action}", self.base))
            .header("Cookie", &self.cookies)
            .multipart(form.text("_csrf_token", token))
            .send()
            .await
            .unwrap()
    }
}

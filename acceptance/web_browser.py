"""The web pages in a real browser: headless Debian Chromium driven by Selenium.

A publisher logs in, creates an API token and uses it against the API, creates a dataset with an
uploaded file through the two-stage form, searches with a facet and a sort, opens the dataset,
follows its RDF link and parses it, checks that the embedded schema.org JSON-LD is the same graph
as /dataset/<id>.jsonld?profiles=schemaorg, edits the dataset, deletes it and logs out; a private
dataset never appears to an anonymous visitor. Every page is checked with axe-core (WCAG 2.1 A
and AA, in English and German: 0 violations) and photographed into $CATALOG_ARTIFACTS; the
keyboard path (skip link, visible focus, one main landmark) is checked on the home page.

Environment: CKAN_URL, CKAN_SYSADMIN_TOKEN, CKAN_EDITOR_TOKEN (the accounts of acceptance/run.sh),
AXE_JS (the path of axe.min.js), CATALOG_ARTIFACTS (where screenshots go).
"""

import os
import sys
import tempfile

import rdflib
import requests
from rdflib.compare import isomorphic
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.support.ui import Select, WebDriverWait

from harness import Report

URL = os.environ["CKAN_URL"].rstrip("/")
ADMIN = os.environ["CKAN_SYSADMIN_TOKEN"]
AXE = open(os.environ["AXE_JS"], encoding="utf-8").read()
ARTIFACTS = os.environ.get("CATALOG_ARTIFACTS") or tempfile.mkdtemp(prefix="catalog-browser-")
os.makedirs(ARTIFACTS, exist_ok=True)
EDITOR, EDITOR_PASSWORD = "acceptance_editor", "editor-password-1"
ADMIN_NAME, ADMIN_PASSWORD = "acceptance_admin", "admin-password-1"

r = Report()


def api(action, token=ADMIN, **data):
    resp = requests.post(f"{URL}/api/3/action/{action}", json=data,
                         headers={"Authorization": token} if token else {}, timeout=30)
    body = resp.json()
    if not body.get("success"):
        raise RuntimeError(f"{action}: {resp.status_code} {body.get('error')}")
    return body["result"]


def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--lang=en-US"):
        opts.add_argument(arg)
    opts.add_experimental_option("prefs", {"intl.accept_languages": "en-US,en"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


driver = browser()
driver.set_page_load_timeout(30)
driver.set_script_timeout(60)
shots = 0


def go(path):
    driver.get(URL + path)


def snap(name):
    """A screenshot of the whole page, kept as an artifact."""
    global shots
    shots += 1
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, max(1000, min(int(height), 6000)))
    driver.save_screenshot(os.path.join(ARTIFACTS, f"{shots:02d}-{name}.png"))
    driver.set_window_size(1280, 1000)


def axe(name):
    """axe-core's WCAG 2.1 A/AA rules on the current page: every violation is a failure."""
    driver.execute_script(AXE)
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: {type: 'tag', values: "
        "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})"
        ".then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact, "
        "nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))))"
        ".catch(e => done([{id: 'axe-error', impact: String(e), nodes: []}]));")
    r.check(f"axe: no WCAG 2.1 A/AA violations on {name}", result == [], result)


def visit(path, name, lang_check=True):
    """Opens a page in English and German: axe on both, a screenshot of each."""
    for prefix, lang in (("", "en"), ("/de", "de")):
        go(prefix + path)
        r.eq(f"{name} ({lang}) <html lang>", driver.find_element(By.TAG_NAME, "html")
             .get_attribute("lang"), lang)
        r.eq(f"{name} ({lang}) has one main landmark",
             len(driver.find_elements(By.CSS_SELECTOR, "main, [role=main]")), 1)
        axe(f"{name} ({lang})")
        snap(f"{name}-{lang}")


def text():
    return driver.find_element(By.TAG_NAME, "body").text


def fill(name, value):
    el = driver.find_element(By.NAME, name)
    el.clear()
    el.send_keys(value)


def click(element):
    """Clicks what leads to another page, and waits until that page is there."""
    old = driver.find_element(By.TAG_NAME, "html")
    element.click()

    def gone(_):
        try:
            old.is_enabled()
            return False
        except WebDriverException:  # stale, or "does not belong to the document"
            return True

    WebDriverWait(driver, 20).until(gone)
    WebDriverWait(driver, 20).until(
        lambda d: d.execute_script("return document.readyState") == "complete")


def submit(value=None):
    sel = f"main button[type=submit][value='{value}']" if value else "main form.stacked button[type=submit]"
    click(driver.find_element(By.CSS_SELECTOR, sel))


def login(name, password):
    go("/user/login")
    fill("login", name)
    fill("password", password)
    submit()


def run():
    # --- what the pages will show: an organization the editor publishes in, a private dataset
    r.section = "setup"
    org = api("organization_create", name="browser-org", title="Browser Test Organization",
              users=[{"name": EDITOR, "capacity": "editor"}])
    api("group_create", name="browser-group", title="Browser Test Group")
    api("package_create", name="browser-private", title="Browser Private Secret",
        owner_org=org["id"], private=True)
    for i in range(3):
        api("package_create", name=f"browser-public-{i}", title=f"Browser Public {i}",
            owner_org=org["id"], private=False, tags=[{"name": "browser"}],
            groups=[{"name": "browser-group"}],
            resources=[{"url": f"https://example.org/{i}.csv", "format": "CSV", "name": f"Data {i}"}])

    # --- an anonymous visitor: the reading pages, the keyboard, no private dataset
    r.section = "anonymous"
    visit("/", "home")
    go("/")
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    active = driver.switch_to.active_element
    r.eq("the first Tab reaches the skip link", active.get_attribute("href"), URL + "/#content")
    outline = driver.execute_script(
        "const s = getComputedStyle(arguments[0]); return [s.outlineStyle, s.outlineWidth];", active)
    r.check("the focused skip link shows a visible outline", outline[0] != "none" and outline[1] != "0px", outline)
    r.check("the focused skip link is on screen",
            driver.execute_script("return arguments[0].getBoundingClientRect().left >= 0;", active))
    active.send_keys(Keys.ENTER)
    r.check("Enter on the skip link goes to the main content", driver.current_url.endswith("#content"),
            driver.current_url)
    visit("/dataset/", "search")
    r.check("the private dataset is not in an anonymous search", "Browser Private Secret" not in text())
    go("/dataset/browser-private")
    r.check("the private dataset's page is not found for an anonymous visitor",
            "Browser Private Secret" not in text() and "not found" in text().lower(), text()[:300])
    go("/dataset/?q=Secret")
    r.check("searching its title finds nothing", "Browser Private Secret" not in text())
    visit("/organization/", "organizations")
    visit("/organization/browser-org", "organization")
    r.check("the organization page hides the private dataset", "Browser Private Secret" not in text())
    visit("/group/", "groups")
    visit("/group/browser-group", "group")
    visit("/dataset/browser-public-0", "dataset-anonymous")
    res0 = api("package_show", id="browser-public-0")["resources"][0]["id"]
    visit(f"/dataset/browser-public-0/resource/{res0}", "resource")
    # A table preview: a DataStore table's rows in its datatables_view, a page at a time.
    made = api("datastore_create", resource={"package_id": "browser-public-1", "name": "Cities table"},
               fields=[{"id": "city", "type": "text"}, {"id": "population", "type": "int"}],
               records=[{"city": f"City {i:02d}", "population": 1000 + i} for i in range(45)])
    trid = made["resource_id"]
    api("resource_create_default_resource_views", resource={"id": trid}, create_datastore_views=True)
    visit(f"/dataset/browser-public-1/resource/{trid}", "table-preview")
    go(f"/dataset/browser-public-1/resource/{trid}")
    rows = driver.find_elements(By.CSS_SELECTOR, "table.preview tbody tr")
    r.eq("the table preview shows a page of 20 rows", len(rows), 20)
    r.check("its caption counts the rows", "Rows 1 to 20 of 45" in text(), text()[:600])
    heads = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "table.preview thead th")]
    r.eq("its columns", heads, ["_id", "city", "population"])
    click(driver.find_element(By.CSS_SELECTOR, "section.view nav.pages a[rel=next]"))
    r.check("Next shows rows 21 to 40", "Rows 21 to 40 of 45" in text(), text()[:600])
    box = driver.find_element(By.CSS_SELECTOR, "form.table-search input[name=q]")
    box.clear()
    box.send_keys("City 07")
    click(driver.find_element(By.CSS_SELECTOR, "form.table-search button[type=submit]"))
    cells = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "table.preview tbody td")]
    r.check("searching the table finds the one row", "Rows 1 to 1 of 1" in text() and "City 07" in cells,
            (text()[:600], cells))
    snap("table-preview-search")
    visit("/dataset/activity/browser-public-0", "activity")
    visit("/user/login", "login")
    visit("/user/register", "register")
    visit(f"/user/{EDITOR}", "user")

    # --- the publisher logs in and makes a token
    r.section = "login and token"
    login(EDITOR, EDITOR_PASSWORD)
    r.check("login lands on the user's page", f"/user/{EDITOR}" in driver.current_url, driver.current_url)
    r.check("the header offers log out", "Log out" in text())
    visit("/dashboard", "dashboard")
    go(f"/user/{EDITOR}/api-tokens")
    fill("name", "browser token")
    submit()
    token = driver.find_element(By.ID, "new-token").text.strip()
    snap("token-created")
    r.check("a token is shown once", len(token) > 20, token)
    who = requests.post(f"{URL}/api/3/action/package_show", json={"id": "browser-private"},
                        headers={"Authorization": token}, timeout=30).json()
    r.check("the new token works against the API (reads the org's private dataset)",
            who.get("success") and who["result"]["name"] == "browser-private", who)
    visit(f"/user/{EDITOR}/api-tokens", "api-tokens")
    r.check("the token is not shown again", token not in driver.page_source)

    # --- the two-stage creation with an uploaded file
    r.section = "create"
    visit("/dataset/new", "dataset-new")
    go("/dataset/new")
    # The browser's own check of required fields is switched off: the server's is tested.
    driver.execute_script("document.querySelector('main form.stacked').noValidate = true")
    submit("continue")
    r.check("an empty form comes back with a message at the title or name",
            "Missing value" in text(), text()[:500])
    snap("dataset-new-errors")
    axe("dataset form with errors")
    fill("title", "Browser Made Dataset")
    fill("name", "")
    fill("notes", "Made **in a browser**.")
    fill("tag_string", "browser, selenium")
    Select(driver.find_element(By.NAME, "owner_org")).select_by_visible_text("Browser Test Organization")
    driver.find_element(By.CSS_SELECTOR, "input[name=private][value=False]").click()
    submit("continue")
    r.check("stage one leads to adding data", driver.current_url.endswith("/dataset/browser-made-dataset/resource/new"),
            driver.current_url)
    visit("/dataset/browser-made-dataset/resource/new", "resource-new")
    go("/dataset/browser-made-dataset/resource/new")
    data = "city,population\nBerlin,3850809\nHamburg,1910160\n"
    path = os.path.join(tempfile.mkdtemp(), "cities.csv")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(data)
    driver.find_element(By.NAME, "upload").send_keys(path)
    fill("name", "Cities")
    submit("go-metadata")
    r.check("finishing opens the dataset page", driver.current_url.endswith("/dataset/browser-made-dataset"),
            driver.current_url)
    pkg = api("package_show", id="browser-made-dataset")
    r.eq("the dataset is active after the last step", pkg["state"], "active")
    r.eq("its tags", sorted(t["name"] for t in pkg["tags"]), ["browser", "selenium"])
    r.eq("one resource", len(pkg["resources"]), 1)
    r.eq("the resource's format guessed from the file", pkg["resources"][0].get("format"), "CSV")
    download = driver.find_element(By.CSS_SELECTOR, "ul.resources a.download").get_attribute("href")
    got = requests.get(download, timeout=30)
    r.eq("the uploaded file downloads unchanged", got.text, data)
    visit("/dataset/browser-made-dataset", "dataset")
    visit(f"/dataset/browser-made-dataset/resource/{pkg['resources'][0]['id']}/edit", "resource-edit")

    # --- search with a facet and a sort
    r.section = "search"
    go("/dataset/?q=browser")
    click(driver.find_element(By.XPATH, "//aside//a[contains(., 'selenium')]"))
    r.check("the tag facet filters to the new dataset", "Browser Made Dataset" in text()
            and "Browser Public 0" not in text(), text()[:800])
    r.check("the active filter is listed with a remove link",
            len(driver.find_elements(By.CSS_SELECTOR, "ul.active-filters a")) >= 1)
    go("/dataset/?q=browser")
    Select(driver.find_element(By.NAME, "sort")).select_by_value("title_string desc")
    click(driver.find_element(By.CSS_SELECTOR, "form.search button[type=submit]"))
    titles = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "ul.results h3 a")]
    r.check("sorting by name descending orders the titles", titles == sorted(titles, reverse=True) and len(titles) >= 4,
            titles)
    snap("search-sorted")

    # --- the dataset's RDF, and its JSON-LD against the schemaorg profile's
    r.section = "rdf"
    go("/dataset/browser-made-dataset")
    turtle = driver.find_element(By.CSS_SELECTOR, "link[rel=alternate][type='text/turtle']").get_attribute("href")
    g = rdflib.Graph().parse(data=requests.get(turtle, timeout=30).text, format="turtle")
    titles = {str(o) for o in g.objects(None, rdflib.DCTERMS.title)}
    r.check("the RDF link parses and names the dataset", "Browser Made Dataset" in titles, titles)
    embedded = driver.find_element(By.CSS_SELECTOR, "script[type='application/ld+json']").get_attribute("textContent")
    page_graph = rdflib.Graph().parse(data=embedded, format="json-ld")
    endpoint = requests.get(f"{URL}/dataset/{pkg['id']}.jsonld?profiles=schemaorg", timeout=30).text
    api_graph = rdflib.Graph().parse(data=endpoint, format="json-ld")
    r.check("the embedded JSON-LD is isomorphic to .jsonld?profiles=schemaorg",
            len(page_graph) > 5 and isomorphic(page_graph, api_graph), (len(page_graph), len(api_graph)))

    # --- follow, edit, delete
    r.section = "edit and delete"
    go("/dataset/browser-made-dataset")
    click(driver.find_element(By.XPATH, "//main//button[normalize-space()='Follow']"))
    r.check("following shows Unfollow", len(driver.find_elements(By.XPATH, "//main//button[normalize-space()='Unfollow']")) == 1)
    click(driver.find_element(By.LINK_TEXT, "Manage"))
    visit("/dataset/edit/browser-made-dataset", "dataset-edit")
    go("/dataset/edit/browser-made-dataset")
    fill("title", "Browser Edited Dataset")
    submit("update")
    r.check("the edit shows on the dataset page", "Browser Edited Dataset" in text(), text()[:300])
    r.eq("the edit is stored", api("package_show", id="browser-made-dataset")["title"], "Browser Edited Dataset")
    go("/dataset/edit/browser-made-dataset")
    click(driver.find_element(By.LINK_TEXT, "Delete"))
    visit("/dataset/delete/browser-made-dataset", "delete-confirm")
    go("/dataset/delete/browser-made-dataset")
    click(driver.find_element(By.CSS_SELECTOR, "main button[type=submit]"))
    r.check("deleting leads to the search page", "/dataset/" in driver.current_url, driver.current_url)
    r.eq("the dataset is deleted", api("package_show", id="browser-made-dataset")["state"], "deleted")
    go("/dataset/?q=Browser+Edited")
    r.check("the deleted dataset is not found by search", "Browser Edited Dataset" not in text())

    # --- logging out
    r.section = "logout"
    click(driver.find_element(By.LINK_TEXT, "Log out"))
    r.check("after logging out the header offers log in", "Log in" in text())
    go("/dataset/browser-private")
    r.check("after logging out the private dataset is hidden again", "Browser Private Secret" not in text())

    # --- the sysadmin's pages
    r.section = "sysadmin"
    login(ADMIN_NAME, ADMIN_PASSWORD)
    visit("/ckan-admin/config", "admin-config")
    visit("/ckan-admin/trash", "admin-trash")
    go("/ckan-admin/trash")
    r.check("the trash lists the deleted dataset", "browser-made-dataset" in text(), text()[:600])
    click(driver.find_element(By.CSS_SELECTOR, "button[name=action][value=package]"))
    gone = requests.post(f"{URL}/api/3/action/package_show", json={"id": "browser-made-dataset"},
                         headers={"Authorization": ADMIN}, timeout=30)
    r.eq("purging from the trash removes the dataset", gone.status_code, 404)

    # --- the harvest pages: a source reading this site's own RDF, run from its page
    r.section = "harvest"
    src = api("harvest_source_create", name="browser-harvest", title="Browser Harvest Source",
              # /catalog.rdf: the ckanapi harvest script (same server) holds /catalog.ttl, and
              # source urls are unique without their query string, as in ckanext-harvest
              url=f"{URL}/catalog.rdf?fq=organization:browser-org", source_type="dcat_rdf",
              owner_org=org["id"], notes="Reads this *site's* own catalog.")
    visit("/harvest", "harvest-sources")
    visit("/harvest/browser-harvest", "harvest-source")
    go("/harvest/browser-harvest")
    click(driver.find_element(By.XPATH, "//main//button[normalize-space()='Harvest now']"))
    import time
    job = {}
    for _ in range(120):
        jobs = api("harvest_job_list", source_id=src["id"])
        job = jobs[0] if jobs else {}
        if job.get("status") == "Finished":
            break
        time.sleep(0.5)
    r.eq("the harvest started from the page finishes", job.get("status"), "Finished")
    r.check("it added the organization's datasets", job.get("stats", {}).get("added", 0) > 0, job)
    visit("/harvest/browser-harvest", "harvest-source-run")
    visit(f"/harvest/browser-harvest/job/{job.get('id')}", "harvest-job")
    go(f"/harvest/browser-harvest/job/{job.get('id')}")
    r.check("the job report shows its statistics", "Job report" in text() and "Added" in text(), text()[:400])


try:
    run()
except Exception:  # noqa: BLE001 - reported as a failure with the page that was open
    import traceback
    traceback.print_exc()
    r.failures.append(f"[{r.section}] raised; page {driver.current_url}")
    try:
        snap("failure")
    except Exception:  # noqa: BLE001
        pass
finally:
    driver.quit()

print(f"web_browser: {r.passed} checks passed, {len(r.failures)} failed; screenshots in {ARTIFACTS}")
for f in r.failures:
    print("  FAIL", f)
sys.exit(1 if r.failures else 0)

// A scripted rater for rating_page_test: opens the rating page in headless
// Chromium (Debian's, driven over DevTools by puppeteer-core), gives its
// rater id in the page's form, and rates its whole batch the way a person
// does: reads the prompt and the response shown, and clicks a score chosen
// from what it read (the response's word count, modulo 11). Nothing but
// the page's own forms and buttons is used.
//
//   node rate_batch.mjs <folder holding node_modules> <chromium> <page URL> <rater id> [word...]
//
// Prints, one line each: "rated <item id> <score>" for every answer it
// rated, in order; "leak <word>" when a page holds one of the words given
// (the candidates' names: no page may name a model); "done <text>" with the
// finished page's text. Exits 1 on anything unexpected.
import {createRequire} from "node:module";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join, resolve} from "node:path";

const [packages, chromium, url, rater, ...forbidden] = process.argv.slice(2);
const puppeteer = createRequire(resolve(packages, "package.json"))("puppeteer-core");

// Flags this closed network needs: without the background-networking ones
// Chromium keeps trying hosts it cannot reach.
const profile = mkdtempSync(join(tmpdir(), "rate_batch."));
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  userDataDir: profile,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});

let status = 0;
try {
  const page = await browser.newPage();
  const check = async (response) => {
    if (!response || response.status() !== 200) throw new Error(`page answered ${response && response.status()}`);
    const html = await page.content();
    for (const word of forbidden) if (html.includes(word)) console.log(`leak ${word}`);
  };
  await check(await page.goto(url));
  await page.type("#rater", rater);
  let [response] = await Promise.all([page.waitForNavigation(), page.click("#start")]);
  await check(response);
  for (let turn = 0; !(await page.$("#done")); ++turn) {
    if (turn > 1000) throw new Error("the batch never ends");
    const text = (selector) => page.$eval(selector, (element) => element.textContent);
    await text("#prompt");  // read, as a person would, though the score goes by the response
    const answer = await text("#response");
    const item = await page.$eval("input[name=item]", (element) => element.value);
    const score = answer.split(/\s+/).filter(Boolean).length % 11;
    console.log(`rated ${item} ${score}`);
    [response] = await Promise.all([page.waitForNavigation(),
                                    page.click(`button[name=score][value="${score}"]`)]);
    await check(response);
  }
  console.log(`done ${await page.$eval("#done", (element) => element.textContent)}`);
} catch (error) {
  console.log(`error ${error.message}`);
  status = 1;
} finally {
  await browser.close();
  rmSync(profile, {recursive: true, force: true});
}
process.exit(status);

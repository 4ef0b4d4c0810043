import { render } from "preact";
import { Root } from "./root";
import "./styles.css";

render(<Root />, document.getElementById("app")!);

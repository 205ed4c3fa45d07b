// util/fill: every element set to one value.
// inputs: none
// output: any shape and layout (packed padding stays zero)
// formula: Y[r, c] = value
uniform float value;
void main() {
    setOutput(vec4(value));
}
